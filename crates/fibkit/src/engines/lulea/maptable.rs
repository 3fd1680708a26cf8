//! The maptable: the constant table shared by every Luleå forwarding table
//! that turns a bit number inside a 16-bit mask into a pointer offset.
//!
//! A mask describes 16 consecutive positions of a cut through a *complete*
//! prefix tree, so only masks whose heads split the 16 positions into
//! aligned power-of-two blocks can occur. A non-zero mask of length `2n` is
//! either the mask with only its first bit set or two masks of length `n`
//! side by side, hence the paper's recurrence for the number of non-zero
//! masks of length `2^n`:
//!
//! ```text
//! a(0) = 1,  a(n) = 1 + a(n-1)^2:   1, 2, 5, 26, 677
//! ```
//!
//! 677 non-zero masks of length 16, 678 with the zero mask. Zero masks and
//! the single-head mask are encoded directly in code words (section 4.2.1),
//! which leaves the paper's 676 rows (indices 0..=675).
//!
//! Masks are `u16` with position 0 (the lowest address) in the most
//! significant bit. Row `r` of [`MAPTABLE`] packs 16 four-bit offsets, one
//! per position `p` in nibble `p`: the number of heads at positions `<= p`
//! minus one, i.e. how many pointers to skip to reach the pointer of the
//! head that covers `p`. 676 rows × 8 bytes = 5408 bytes, the paper's size.

/// `a(n)`: the number of non-zero masks of length `2^n` that a complete
/// prefix tree can produce.
pub const fn complete_mask_count(n: u32) -> u64 {
    let mut count = 1u64;
    let mut step = 0;
    while step < n {
        count = 1 + count * count;
        step += 1;
    }
    count
}

/// Rows of the maptable: every non-zero 16-bit mask except the single-head
/// one (676).
pub const ROWS: usize = complete_mask_count(4) as usize - 1;

/// Code words whose ten-bit row value is at least this encode a next hop
/// directly instead of a maptable row.
pub const DIRECT_ROW: u16 = ROWS as u16;

/// The mask with only its first position set (a leaf covering all 16).
pub const SINGLE_HEAD: u16 = 0x8000;

/// Every maptable mask, in ascending order (row `r` describes `MASKS[r]`).
pub static MASKS: [u16; ROWS] = generate_masks();

/// The maptable: nibble `p` of row `r` is the pointer offset of position `p`
/// in mask `MASKS[r]`.
pub static MAPTABLE: [u64; ROWS] = generate_maptable();

/// Generates the masks by the recurrence: the masks of width `2w` are the
/// single-head mask followed by every pair of masks of width `w`. With both
/// halves in ascending order the pairs come out ascending, and the
/// single-head mask is smaller than every pair.
const fn generate_masks() -> [u16; ROWS] {
    const CAPACITY: usize = ROWS + 1;
    let mut current = [0u16; CAPACITY];
    current[0] = 1;
    let mut len = 1;
    let mut width = 1;
    while width < 16 {
        let mut next = [0u16; CAPACITY];
        next[0] = 1 << (2 * width - 1);
        let mut next_len = 1;
        let mut left = 0;
        while left < len {
            let mut right = 0;
            while right < len {
                next[next_len] = (current[left] << width) | current[right];
                next_len += 1;
                right += 1;
            }
            left += 1;
        }
        current = next;
        len = next_len;
        width *= 2;
    }
    assert!(len == CAPACITY && current[0] == SINGLE_HEAD);
    let mut rows = [0u16; ROWS];
    let mut index = 0;
    while index < ROWS {
        rows[index] = current[index + 1];
        index += 1;
    }
    rows
}

const fn generate_maptable() -> [u64; ROWS] {
    let masks = generate_masks();
    let mut table = [0u64; ROWS];
    let mut row = 0;
    while row < ROWS {
        let mut packed = 0u64;
        let mut position = 0;
        while position < 16 {
            // Heads at positions 0..=position are the top position+1 bits.
            let heads = (masks[row] >> (15 - position)).count_ones() as u64;
            packed |= (heads - 1) << (4 * position);
            position += 1;
        }
        table[row] = packed;
        row += 1;
    }
    table
}

/// The pointer offset of position `bit` (0..16) in maptable row `row`.
#[inline(always)]
pub fn offset(row: u16, bit: u32) -> usize {
    debug_assert!(bit < 16);
    ((MAPTABLE[usize::from(row)] >> (4 * bit)) & 15) as usize
}

/// The maptable row of `mask`, if it is a mask with at least two heads that
/// a complete prefix tree can produce.
pub fn row_of(mask: u16) -> Option<u16> {
    MASKS.binary_search(&mask).ok().map(|row| row as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent definition: the heads of a mask of `width` positions cut
    /// it into aligned power-of-two blocks (each head starts a block that
    /// runs to the next head or the end).
    fn is_complete_tree_mask(mask: u32, width: u32) -> bool {
        if mask >> (width - 1) & 1 == 0 {
            return false; // position 0 must start a block
        }
        let heads: Vec<u32> = (0..width).filter(|&p| mask >> (width - 1 - p) & 1 == 1).collect();
        heads.iter().enumerate().all(|(i, &start)| {
            let end = heads.get(i + 1).copied().unwrap_or(width);
            let size = end - start;
            size.is_power_of_two() && start % size == 0
        })
    }

    #[test]
    fn recurrence_matches_brute_force_counts() {
        assert_eq!((0..5).map(complete_mask_count).collect::<Vec<_>>(), vec![1, 2, 5, 26, 677]);
        for n in 0..=4 {
            let width = 1u32 << n;
            let brute = (1u32..1 << width).filter(|&mask| is_complete_tree_mask(mask, width)).count();
            assert_eq!(brute as u64, complete_mask_count(n), "width {width}");
        }
        // The paper: a(4) + 1 = 678 masks with zero, 676 maptable rows.
        assert_eq!(complete_mask_count(4) + 1, 678);
        assert_eq!(ROWS, 676);
        assert_eq!(std::mem::size_of_val(&MAPTABLE), 5408);
    }

    #[test]
    fn masks_are_exactly_the_multi_head_complete_masks_in_order() {
        assert!(MASKS.windows(2).all(|pair| pair[0] < pair[1]), "not strictly ascending");
        let expected: Vec<u16> = (1u32..1 << 16)
            .filter(|&mask| is_complete_tree_mask(mask, 16) && mask != u32::from(SINGLE_HEAD))
            .map(|mask| mask as u16)
            .collect();
        assert_eq!(MASKS.to_vec(), expected);
        assert_eq!(row_of(0xffff), Some(675));
        assert_eq!(row_of(SINGLE_HEAD), None);
        assert_eq!(row_of(0x8001), None, "a head at 15 alone leaves 1..15 unaligned");
    }

    #[test]
    fn offsets_count_heads_before_each_position() {
        for (row, &mask) in MASKS.iter().enumerate() {
            let mut heads_seen = 0;
            for bit in 0..16 {
                if mask >> (15 - bit) & 1 == 1 {
                    heads_seen += 1;
                }
                assert_eq!(offset(row as u16, bit), heads_seen - 1, "mask {mask:#06x} bit {bit}");
            }
        }
        // Figure 7's style example: heads at 0, 4, 6, 7, 8, 12, 13, 14, 15.
        let mask = 0b1000_1011_1000_1111;
        let row = row_of(mask).unwrap();
        let offsets: Vec<usize> = (0..16).map(|bit| offset(row, bit)).collect();
        assert_eq!(offsets, vec![0, 0, 0, 0, 1, 1, 2, 3, 4, 4, 4, 4, 5, 6, 7, 8]);
    }
}
