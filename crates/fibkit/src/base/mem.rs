//! Lookup arrays on transparent huge pages.
//!
//! A random lookup in a table of a few MiB misses the first-level data TLB
//! almost every time when the table sits on 4 KiB pages (Zen 4's L1 DTLB
//! has 72 entries: 288 KiB of 4 KiB pages), and a table larger than the
//! second-level TLB's reach (12 MiB) pays a page walk on top of the cache
//! miss. On 2 MiB pages the same 72 entries cover 144 MiB. So the engines
//! keep their big lookup arrays (DXR's `direct` and `range` tables,
//! Poptrie's `direct`, `nodes` and `leaves`, DIR-24-8's `tbl24`) in a
//! [`LookupArray`], which asks the kernel for transparent huge pages:
//!
//! ```text
//!   array of >= 1 MiB                     smaller array
//!   +--------------------------------+    +-----------------+
//!   | 2 MiB-aligned, length rounded  |    | the Vec's own   |
//!   | up to 2 MiB, madvise(HUGEPAGE) |    | allocation      |
//!   | before the first write         |    +-----------------+
//!   +--------------------------------+
//! ```
//!
//! Linux grants huge pages to `madvise`d memory when
//! `/sys/kernel/mm/transparent_hugepage/enabled` says `always` or
//! `madvise` (the usual default); elsewhere, or if the kernel declines,
//! the array simply stays on small pages. The rounding costs at most
//! 2 MiB of memory per array, never cache: lookups touch only the
//! array's own length. `FIBKIT_HUGEPAGES=off` in the environment (read
//! once) turns the advice off, for measuring what it brings.
//!
//! Builders allocate the arrays that grow with the table fallibly
//! ([`LookupArray::try_from_fn`], [`try_with_capacity`], [`try_filled`],
//! [`try_reserve`] and [`try_push`] for a vector growing to a length not
//! known beforehand), and so do updaters moving to a copy of their arrays
//! ([`try_copy_cells_grown`]): memory the system refuses (an
//! address-space or memory limit) is an [`AllocError`], which the engine
//! reports as `BuildError::OutOfMemory`, where an infallible allocation
//! would end the process.
//!
//! An array may also be a view of a mapped compiled FIB file
//! ([`crate::file`]): [`LookupArray::mapped`] serves its elements from the
//! file's pages (shared with every process that maps the file) and keeps
//! the mapping alive; only [`Plain`] elements, valid for any bytes, can be
//! read that way.

use std::alloc::{self, Layout};
use std::any::Any;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64};
use std::sync::{Arc, OnceLock};

/// Size and alignment of a huge page on x86-64 and arm64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// Arrays of at least this many bytes go on huge pages.
const HUGE_THRESHOLD: usize = 1 << 20;

/// Whether big arrays are put on huge pages (`FIBKIT_HUGEPAGES=off`
/// says no; read once per process).
pub fn huge_pages_enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os("FIBKIT_HUGEPAGES").is_none_or(|value| value != "off"))
}

/// An element type that any bytes are a valid value of, with no drop glue
/// and a fixed little-endian layout: what a compiled FIB file stores and
/// [`LookupArray::mapped`] reads in place.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid `Self`,
/// the type must have no padding and no `Drop`, and [`Plain::write_le`]
/// must write exactly the bytes a little-endian machine holds.
pub unsafe trait Plain: Sized + Send + Sync + 'static {
    /// Appends `elements` as little-endian bytes (atomics are loaded
    /// `Relaxed`, one at a time).
    fn write_le(elements: &[Self], out: &mut Vec<u8>);
}

macro_rules! plain {
    ($($type:ty => |$element:ident| $word:expr),* $(,)?) => {
        $(
            // SAFETY: an integer, a float or an atomic integer: no padding,
            // no drop glue, every bit pattern valid (a float's included: NaNs
            // are values); written as its little-endian bytes.
            unsafe impl Plain for $type {
                fn write_le(elements: &[Self], out: &mut Vec<u8>) {
                    out.reserve(std::mem::size_of_val(elements));
                    for $element in elements {
                        out.extend_from_slice(&$word.to_le_bytes());
                    }
                }
            }
        )*
    };
}

plain!(
    u8 => |element| *element,
    u16 => |element| *element,
    u32 => |element| *element,
    u64 => |element| *element,
    u128 => |element| *element,
    i64 => |element| *element,
    f64 => |element| *element,
    AtomicU16 => |element| element.load(std::sync::atomic::Ordering::Relaxed),
    AtomicU32 => |element| element.load(std::sync::atomic::Ordering::Relaxed),
    AtomicU64 => |element| element.load(std::sync::atomic::Ordering::Relaxed),
);

/// An atomic integer cell with the size, alignment and bit validity of
/// its plain word.
///
/// # Safety
/// `Self` and `Self::Word` must have the same size, alignment and valid
/// bit patterns.
pub unsafe trait AtomicCell: Plain {
    /// The plain integer.
    type Word: Copy + Ord + Into<u64>;
}

// SAFETY: the standard library documents each atomic integer as having
// the same size and bit validity as its integer, and (on the platforms
// where these types exist as lock-free) the same alignment.
unsafe impl AtomicCell for AtomicU16 {
    type Word = u16;
}
// SAFETY: as for `AtomicU16`.
unsafe impl AtomicCell for AtomicU32 {
    type Word = u32;
}
// SAFETY: as for `AtomicU16`.
unsafe impl AtomicCell for AtomicU64 {
    type Word = u64;
}

const _: () = assert!(align_of::<AtomicU64>() == align_of::<u64>() && align_of::<AtomicU32>() == align_of::<u32>());

/// An allocation the system refused (or one larger than the address
/// space): the bytes asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("out of memory: {bytes} bytes could not be allocated")]
pub struct AllocError {
    /// The bytes asked for (`usize::MAX` past the address space).
    pub bytes: usize,
}

impl AllocError {
    /// The failure of an array of `len` elements of type `T`.
    pub fn of<T>(len: usize) -> Self {
        AllocError { bytes: len.saturating_mul(size_of::<T>()) }
    }
}

/// A vector of `len` elements, each `value`, or the allocation's failure
/// (where `vec![value; len]` would abort the process).
///
/// # Errors
/// [`AllocError`] when the memory cannot be had.
pub fn try_filled<T: Clone>(len: usize, value: T) -> Result<Vec<T>, AllocError> {
    let mut elements = try_with_capacity(len)?;
    elements.resize(len, value);
    Ok(elements)
}

/// An empty vector with room for exactly `len` elements, or the
/// allocation's failure (where `Vec::with_capacity` would abort).
///
/// # Errors
/// [`AllocError`] when the memory cannot be had.
pub fn try_with_capacity<T>(len: usize) -> Result<Vec<T>, AllocError> {
    let mut elements = Vec::new();
    refusal::check::<T>(len)?;
    elements.try_reserve_exact(len).map_err(|_| AllocError::of::<T>(len))?;
    Ok(elements)
}

/// Room for `additional` more elements in `elements`, grown as a push
/// grows it (doubling), or the allocation's failure: how a builder grows
/// an array whose final length it does not know. Costs a comparison while
/// the room is there.
///
/// # Errors
/// [`AllocError`] (the bytes of the elements wanted) when the memory
/// cannot be had; `elements` is unchanged then.
#[inline]
pub fn try_reserve<T>(elements: &mut Vec<T>, additional: usize) -> Result<(), AllocError> {
    if elements.capacity() - elements.len() >= additional {
        return Ok(());
    }
    grow(elements, additional)
}

#[cold]
fn grow<T>(elements: &mut Vec<T>, additional: usize) -> Result<(), AllocError> {
    let wanted = elements.len().saturating_add(additional);
    refusal::check::<T>(wanted)?;
    elements.try_reserve(additional).map_err(|_| AllocError::of::<T>(wanted))
}

/// Appends `element` to `elements`, or returns the allocation's failure
/// ([`try_reserve`]).
///
/// # Errors
/// [`AllocError`] when the memory cannot be had.
#[inline]
pub fn try_push<T>(elements: &mut Vec<T>, element: T) -> Result<(), AllocError> {
    try_reserve(elements, 1)?;
    elements.push(element);
    Ok(())
}

/// Room for `additional` more entries in `map`, or the allocation's
/// failure (the bytes of its entries, an estimate).
///
/// # Errors
/// [`AllocError`] when the memory cannot be had.
pub fn try_reserve_map<K: Eq + std::hash::Hash, V, S: std::hash::BuildHasher>(
    map: &mut std::collections::HashMap<K, V, S>,
    additional: usize,
) -> Result<(), AllocError> {
    if map.capacity() - map.len() >= additional {
        return Ok(());
    }
    let wanted = map.len().saturating_add(additional);
    refusal::check::<(K, V)>(wanted)?;
    map.try_reserve(additional).map_err(|_| AllocError::of::<(K, V)>(wanted))
}

/// An array of `len` elements (at least as many as `elements` has): a copy
/// of `elements` (`copy` of each), then `fill()`: how a builder moves its
/// words into a lookup array (an updater copies its own cells with
/// [`try_copy_cells_grown`]); or the allocation's failure.
///
/// The elements are read by one iterator, not by index: under Miri each
/// index makes a reference to the whole of `elements`, which cost time in
/// proportion to it (docs/hardening.md).
///
/// # Errors
/// [`AllocError`] when the memory cannot be had.
pub fn try_copy_grown<S, T>(
    elements: &[S],
    len: usize,
    mut copy: impl FnMut(&S) -> T,
    mut fill: impl FnMut() -> T,
) -> Result<LookupArray<T>, AllocError> {
    let mut source = elements.iter();
    LookupArray::try_from_fn(len.max(elements.len()), |_| match source.next() {
        Some(element) => copy(element),
        None => fill(),
    })
}

/// [`try_copy_grown`] of an updater's own cells: `cells` copied as bytes
/// (one `memcpy`, where a loop of atomic loads moves a word at a time and
/// does not vectorise), then `fill()` up to `len`: how an updater moves
/// to a copy of its arrays, for a batch written aside
/// (`Updater::copy_for_batch`) or for more room.
///
/// # Safety
/// No thread but the caller's may write `cells` while the copy runs (the
/// updater, its structure's only writer, is the caller): the copy's
/// plain reads would race with a write, though not with readers' atomic
/// loads.
///
/// # Errors
/// [`AllocError`] when the memory cannot be had.
pub unsafe fn try_copy_cells_grown<T: Plain>(
    cells: &[T],
    len: usize,
    mut fill: impl FnMut() -> T,
) -> Result<LookupArray<T>, AllocError> {
    let len = len.max(cells.len());
    refusal::check::<T>(len)?;
    let copy = |start: *mut T| {
        // SAFETY: the new array holds `len >= cells.len()` elements and is
        // not `cells`; `T: Plain` makes a byte copy a valid value with
        // nothing owned twice; the caller excludes writes to `cells`.
        unsafe { std::ptr::copy_nonoverlapping(cells.as_ptr(), start, cells.len()) };
        for index in cells.len()..len {
            // SAFETY: index < len; each slot past the copy is written once.
            unsafe { start.add(index).write(fill()) };
        }
    };
    // SAFETY: `copy` writes every one of the `len` elements.
    unsafe { LookupArray::allocate_with(len, copy) }
}

/// Refusals for tests: `refuse_above` makes every fallible allocation
/// of this module asking for more than so many bytes fail on the calling
/// thread, as the system would under a memory limit, and `refuse_nth`
/// only the n-th one from now, until the guard they return is dropped.
/// Tests check with them that a builder or an updater turns each refused
/// array into its typed error and leaves what readers see as it was.
/// Absent outside tests.
mod refusal {
    use super::AllocError;

    /// Refused: allocations above this many bytes, and the allocation
    /// this many allocations from now (`None`: no such one).
    #[cfg(test)]
    type Refusal = (usize, Option<usize>);

    #[cfg(test)]
    thread_local! {
        static REFUSAL: std::cell::Cell<Refusal> = const { std::cell::Cell::new((usize::MAX, None)) };
    }

    /// `Err` if an array of `len` elements of `T` is to be refused (one of
    /// no bytes allocates nothing, and is not counted).
    #[inline]
    pub(super) fn check<T>(len: usize) -> Result<(), AllocError> {
        let bytes = len.saturating_mul(size_of::<T>());
        #[cfg(test)]
        {
            let (above, countdown) = REFUSAL.get();
            if bytes > 0 {
                REFUSAL.set((above, countdown.map(|countdown| countdown.wrapping_sub(1))));
                if bytes > above || countdown == Some(0) {
                    return Err(AllocError::of::<T>(len));
                }
            }
        }
        let _ = bytes;
        Ok(())
    }

    /// Restores the refusal it replaced when dropped.
    #[cfg(test)]
    pub struct Refusing(Refusal);

    #[cfg(test)]
    impl Drop for Refusing {
        fn drop(&mut self) {
            REFUSAL.set(self.0);
        }
    }

    /// Refuses fallible allocations of more than `bytes` on this thread
    /// while the guard lives.
    #[cfg(test)]
    pub fn refuse_above(bytes: usize) -> Refusing {
        Refusing(REFUSAL.replace((bytes, None)))
    }

    /// Refuses the fallible allocation `n` allocations from now (0: the
    /// next one) on this thread, and only it, while the guard lives.
    #[cfg(test)]
    pub fn refuse_nth(n: usize) -> Refusing {
        Refusing(REFUSAL.replace((usize::MAX, Some(n))))
    }
}

#[cfg(test)]
pub(crate) use refusal::{refuse_above, refuse_nth};

/// Where a [`LookupArray`]'s elements live.
enum Backing {
    /// A boxed slice's memory.
    Boxed,
    /// An allocation of this layout advised for huge pages.
    Huge(Layout),
    /// A mapped file's pages, kept mapped by the owner.
    Mapped(#[allow(dead_code)] Arc<dyn Any + Send + Sync>),
}

/// A fixed-length array for lookups to read, on transparent huge pages
/// when it is large, or in a mapped file (see the module docs).
/// Dereferences to `[T]`.
pub struct LookupArray<T> {
    /// The first element (dangling for an empty array).
    start: NonNull<T>,
    /// Number of elements.
    len: usize,
    backing: Backing,
}

// SAFETY: a `LookupArray<T>` owns its elements as a `Box<[T]>` does.
unsafe impl<T: Send> Send for LookupArray<T> {}
// SAFETY: shared access only hands out `&[T]`, as `Box<[T]>` does.
unsafe impl<T: Sync> Sync for LookupArray<T> {}

impl<T> LookupArray<T> {
    /// An array of `len` elements, element `i` being `element(i)`.
    pub fn from_fn(len: usize, element: impl FnMut(usize) -> T) -> Self {
        Self::allocate_from_fn(len, element).unwrap_or_else(|error| {
            alloc::handle_alloc_error(
                Layout::from_size_align(error.bytes, align_of::<T>()).unwrap_or(Layout::new::<T>()),
            )
        })
    }

    /// [`LookupArray::from_fn`], or the allocation's failure instead of
    /// the end of the process: what builders use for arrays that grow
    /// with the table.
    ///
    /// # Errors
    /// [`AllocError`] when the memory cannot be had.
    pub fn try_from_fn(len: usize, element: impl FnMut(usize) -> T) -> Result<Self, AllocError> {
        refusal::check::<T>(len)?;
        Self::allocate_from_fn(len, element)
    }

    /// The array of [`LookupArray::from_fn`], or the system's refusal.
    fn allocate_from_fn(len: usize, mut element: impl FnMut(usize) -> T) -> Result<Self, AllocError> {
        let write = |start: *mut T| {
            for index in 0..len {
                // SAFETY: index < len and the allocation holds len
                // elements; each slot is written exactly once.
                unsafe { start.add(index).write(element(index)) };
            }
        };
        // SAFETY: `write` writes every one of the `len` elements.
        unsafe { Self::allocate_with(len, write) }
    }

    /// An array of `len` elements written by `init`, given the first one's
    /// place (on huge pages if the array is large), or the system's
    /// refusal.
    ///
    /// # Safety
    /// `init` must write every one of the `len` elements.
    unsafe fn allocate_with(len: usize, init: impl FnOnce(*mut T)) -> Result<Self, AllocError> {
        match Self::huge_layout(len) {
            None => {
                let mut elements = Vec::new();
                elements.try_reserve_exact(len).map_err(|_| AllocError::of::<T>(len))?;
                init(elements.as_mut_ptr());
                // SAFETY: the vector holds room for `len` elements, and the
                // caller's `init` wrote them all.
                unsafe { elements.set_len(len) };
                Ok(Self::from_box(elements.into_boxed_slice()))
            }
            Some(layout) => {
                let start = Self::allocate_huge(layout).ok_or(AllocError::of::<T>(len))?;
                init(start.as_ptr());
                Ok(LookupArray { start, len, backing: Backing::Huge(layout) })
            }
        }
    }

    /// Whether the array was placed on memory advised for huge pages.
    pub fn on_huge_pages(&self) -> bool {
        matches!(self.backing, Backing::Huge(_))
    }

    /// Whether the array is a view of a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.backing, Backing::Mapped(_))
    }

    /// A view of `len` elements at `start`, inside memory that `owner`
    /// keeps mapped (a compiled FIB file's, [`crate::file`]).
    ///
    /// # Safety
    /// `start` must be aligned for `T` and point at `len * size_of::<T>()`
    /// bytes that stay mapped, readable and writable (a private,
    /// copy-on-write mapping) while `owner` lives, and that no other
    /// `LookupArray` or reference covers.
    pub unsafe fn mapped(owner: Arc<dyn Any + Send + Sync>, start: NonNull<T>, len: usize) -> Self
    where
        T: Plain,
    {
        debug_assert!(start.as_ptr().is_aligned());
        LookupArray { start, len, backing: Backing::Mapped(owner) }
    }

    /// The layout of a huge-page allocation for `len` elements, or `None`
    /// if the array is too small or huge pages are off.
    fn huge_layout(len: usize) -> Option<Layout> {
        let bytes = len.checked_mul(size_of::<T>())?;
        if bytes < HUGE_THRESHOLD || !huge_pages_enabled() || align_of::<T>() > HUGE_PAGE {
            return None;
        }
        let rounded = bytes.checked_next_multiple_of(HUGE_PAGE)?;
        Layout::from_size_align(rounded, HUGE_PAGE).ok()
    }

    /// Allocates `layout` and advises huge pages before anything touches
    /// it; `None` if the system refuses the memory.
    fn allocate_huge(layout: Layout) -> Option<NonNull<T>> {
        // SAFETY: the layout has a non-zero size (at least HUGE_THRESHOLD).
        let memory = unsafe { alloc::alloc(layout) };
        let start = NonNull::new(memory.cast::<T>())?;
        #[cfg(all(target_os = "linux", not(miri)))]
        // SAFETY: the range is one allocation of ours; madvise only changes
        // how the kernel backs it (a failure leaves it on small pages).
        unsafe {
            libc::madvise(memory.cast(), layout.size(), libc::MADV_HUGEPAGE);
        }
        Some(start)
    }

    /// Takes over a boxed slice's memory as it is.
    fn from_box(elements: Box<[T]>) -> Self {
        let len = elements.len();
        let raw = Box::into_raw(elements);
        // SAFETY: `Box::into_raw` never returns null.
        let start = unsafe { NonNull::new_unchecked(raw.cast::<T>()) };
        LookupArray { start, len, backing: Backing::Boxed }
    }
}

impl<T: AtomicCell> LookupArray<T> {
    /// The cells' words read as plain integers, for an owner holding the
    /// array exclusively (checking a mapped file's arrays before anyone
    /// can search them): a loop over them vectorises, one of atomic loads
    /// does not.
    pub fn words(&mut self) -> &[T::Word] {
        // SAFETY: `T` and `T::Word` share size, alignment and bit validity
        // (`AtomicCell`), and `&mut self` excludes every atomic access for
        // the borrow's lifetime.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr().cast::<T::Word>(), self.len) }
    }
}

impl<T> From<Vec<T>> for LookupArray<T> {
    /// Moves the elements onto huge pages if the array is large, or keeps
    /// the vector's memory (spare capacity released) if not, or if the
    /// system refuses the huge-page copy's memory.
    fn from(mut elements: Vec<T>) -> Self {
        let len = elements.len();
        let huge = Self::huge_layout(len).and_then(|layout| Some((layout, Self::allocate_huge(layout)?)));
        let Some((layout, start)) = huge else { return Self::from_box(elements.into_boxed_slice()) };
        // SAFETY: both regions hold `len` elements and do not overlap; the
        // vector forgets its elements (len 0) so they are moved, not dropped.
        unsafe {
            std::ptr::copy_nonoverlapping(elements.as_ptr(), start.as_ptr(), len);
            elements.set_len(0);
        }
        LookupArray { start, len, backing: Backing::Huge(layout) }
    }
}

impl<T> FromIterator<T> for LookupArray<T> {
    fn from_iter<I: IntoIterator<Item = T>>(elements: I) -> Self {
        Self::from(elements.into_iter().collect::<Vec<T>>())
    }
}

impl<T> Deref for LookupArray<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `start` points at `len` initialised elements we own.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for LookupArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

impl<T> Drop for LookupArray<T> {
    fn drop(&mut self) {
        let elements = std::ptr::slice_from_raw_parts_mut(self.start.as_ptr(), self.len);
        match self.backing {
            // SAFETY: the elements are initialised and dropped once, then
            // the memory is freed with the layout it was allocated with.
            Backing::Huge(layout) => unsafe {
                std::ptr::drop_in_place(elements);
                alloc::dealloc(self.start.as_ptr().cast(), layout);
            },
            // SAFETY: the memory came from `Box::into_raw` of this slice.
            Backing::Boxed => drop(unsafe { Box::from_raw(elements) }),
            // `Plain` elements have no drop glue; the owner unmaps.
            Backing::Mapped(_) => {}
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for LookupArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LookupArray")
            .field("len", &self.len)
            .field("on_huge_pages", &self.on_huge_pages())
            .field("mapped", &self.is_mapped())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn large_arrays_are_aligned_to_huge_pages_and_keep_their_elements() {
        let words: Vec<u32> = (0..(3 << 20) / 4).map(|index| index as u32 * 7).collect();
        let array = LookupArray::from(words);
        assert_eq!(array.len(), (3 << 20) / 4);
        assert!(array.iter().enumerate().all(|(index, &word)| word == index as u32 * 7));
        if huge_pages_enabled() {
            assert!(array.on_huge_pages());
            assert_eq!(array.as_ptr() as usize % HUGE_PAGE, 0);
        }
        let built = LookupArray::from_fn(1 << 19, |index| index as u64);
        assert_eq!(built[12_345], 12_345);
        assert_eq!(built.on_huge_pages(), huge_pages_enabled());
    }

    #[test]
    fn small_and_empty_arrays_stay_on_ordinary_memory() {
        let small: LookupArray<u16> = (0..1000).collect();
        assert!(!small.on_huge_pages());
        assert_eq!(small[999], 999);
        let empty: LookupArray<u64> = LookupArray::from(Vec::new());
        assert!(empty.is_empty());
        let built: LookupArray<u8> = LookupArray::from_fn(0, |_| 1);
        assert!(built.is_empty());
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri stops at an allocation it cannot make, where the system refuses it")]
    fn what_the_system_cannot_give_is_an_error() {
        assert_eq!(try_with_capacity::<u64>(usize::MAX / 4).unwrap_err(), AllocError { bytes: usize::MAX });
        assert_eq!(try_filled(usize::MAX / 2, 0u16).unwrap_err(), AllocError { bytes: usize::MAX - 1 });
        let mut words = vec![0u32; 4];
        assert_eq!(try_reserve(&mut words, usize::MAX / 8).unwrap_err(), AllocError::of::<u32>(4 + usize::MAX / 8));
        assert_eq!(words, [0; 4]);
        let refused = LookupArray::<u64>::try_from_fn(usize::MAX / 16, |_| 0).unwrap_err();
        assert_eq!(refused, AllocError::of::<u64>(usize::MAX / 16));
    }

    #[test]
    fn test_refusals_refuse_what_they_say_and_nothing_else() {
        let mut words: Vec<u64> = vec![1, 2, 3];
        words.shrink_to_fit();
        {
            let _refusing = refuse_above(16);
            assert_eq!(try_push(&mut words, 4), Err(AllocError { bytes: 32 }));
            assert_eq!(words, [1, 2, 3]);
            assert!(LookupArray::<u64>::try_from_fn(2, |index| index as u64).is_ok(), "16 bytes are not above 16");
            assert!(try_copy_grown(&words, 3, |&word| word, || 0).is_err());
        }
        try_push(&mut words, 4).unwrap();
        {
            let _refusing = refuse_nth(1);
            assert!(try_with_capacity::<u8>(10).is_ok());
            assert!(try_with_capacity::<u8>(0).is_ok(), "no bytes: not an allocation");
            assert_eq!(try_with_capacity::<u8>(10).unwrap_err(), AllocError { bytes: 10 });
            assert!(try_filled(10, 0u8).is_ok(), "only the one refused");
        }
        let copy = try_copy_grown(&[1u16, 2], 4, |&word| word, || 9).unwrap();
        assert_eq!(&*copy, [1, 2, 9, 9]);
        assert_eq!(&*try_copy_grown(&[1u16, 2, 3], 1, |&word| word, || 9).unwrap(), [1, 2, 3]);
    }

    #[test]
    fn cells_are_copied_as_they_hold_then_filled() {
        let load = |cells: &[AtomicU32]| cells.iter().map(|cell| cell.load(Ordering::Relaxed)).collect::<Vec<_>>();
        let cells: Vec<AtomicU32> = (1..=3).map(AtomicU32::new).collect();
        cells[1].store(7, Ordering::Release);
        // SAFETY: no other thread has the cells (so for the copies below).
        let copy = unsafe { try_copy_cells_grown(&cells, 5, || AtomicU32::new(9)) }.unwrap();
        assert_eq!(load(&copy), [1, 7, 3, 9, 9]);
        assert!(!copy.on_huge_pages());
        // SAFETY: as above.
        let copy = unsafe { try_copy_cells_grown(&cells, 1, || AtomicU32::new(9)) }.unwrap();
        assert_eq!(load(&copy), [1, 7, 3], "never shorter than the cells");
        let many: Vec<AtomicU32> = (0..HUGE_THRESHOLD as u32 / 4).map(AtomicU32::new).collect();
        // SAFETY: as above.
        let copy = unsafe { try_copy_cells_grown(&many, many.len() + 2, || AtomicU32::new(u32::MAX)) }.unwrap();
        assert_eq!(copy.on_huge_pages(), huge_pages_enabled());
        assert!(copy[..many.len()].iter().zip(0..).all(|(cell, word)| cell.load(Ordering::Relaxed) == word));
        assert_eq!(load(&copy[many.len()..]), [u32::MAX; 2]);
        let _refusing = refuse_above(12);
        // SAFETY: as above.
        let refused = unsafe { try_copy_cells_grown(&cells, 4, || AtomicU32::new(0)) };
        assert_eq!(refused.unwrap_err(), AllocError::of::<AtomicU32>(4));
    }

    /// The copy's plain reads meet readers' atomic loads on other threads
    /// (an updater copying while readers search): reads both, no race,
    /// which Miri checks.
    #[test]
    fn cells_are_copied_while_other_threads_load_them() {
        let cells: Vec<AtomicU32> = (0..64).map(AtomicU32::new).collect();
        let copy = std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| cells.iter().map(|cell| cell.load(Ordering::Acquire)).sum::<u32>());
            }
            // SAFETY: the other threads only load the cells.
            unsafe { try_copy_cells_grown(&cells, 0, || AtomicU32::new(0)) }.unwrap()
        });
        assert!(copy.iter().zip(0..).all(|(cell, word)| cell.load(Ordering::Relaxed) == word));
    }

    #[test]
    fn every_element_is_dropped_once() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct Counted(#[allow(dead_code)] [u64; 8]);
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        let count = (2 << 20) / size_of::<Counted>() + 3;
        drop(LookupArray::from((0..count).map(|_| Counted([0; 8])).collect::<Vec<_>>()));
        assert_eq!(DROPS.swap(0, Ordering::Relaxed), count);
        drop(LookupArray::from_fn(5, |_| Counted([0; 8])));
        assert_eq!(DROPS.load(Ordering::Relaxed), 5);
    }
}
