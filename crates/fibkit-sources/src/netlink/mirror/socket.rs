//! The mirror's socket calls that netlink-sys does not make: the receive
//! buffer forced past `net.core.rmem_max`, and a read's wait.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

use netlink_sys::Socket;

/// Sets the receive buffer, past `net.core.rmem_max` when the process may
/// (`SO_RCVBUFFORCE`, CAP_NET_ADMIN); returns the size the kernel took.
pub(super) fn receive_buffer(socket: &Socket, bytes: usize) -> io::Result<(usize, &'static str)> {
    let size = libc::c_int::try_from(bytes / 2).unwrap_or(libc::c_int::MAX / 2).max(1);
    // SAFETY: setsockopt reads `optlen` bytes from `&size`, a live c_int
    // of that size, for the duration of the call; the descriptor is the
    // socket's own.
    let forced = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&raw const size).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    } == 0;
    if !forced {
        socket.set_rx_buf_sz(size)?;
    }
    let how = if forced { "SO_RCVBUFFORCE" } else { "SO_RCVBUF, at most net.core.rmem_max" };
    Ok((socket.get_rx_buf_sz()?, how))
}

/// Waits at most `timeout` for the socket to be readable (or in error).
pub(super) fn readable(socket: &Socket, timeout: Duration) -> io::Result<bool> {
    let mut poll = libc::pollfd { fd: socket.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `poll` points to one live pollfd for the duration of the
    // call, and the count says one.
    let ready = unsafe { libc::poll(&mut poll, 1, millis) };
    if ready >= 0 {
        return Ok(ready > 0);
    }
    match io::Error::last_os_error() {
        error if error.kind() == io::ErrorKind::Interrupted => Ok(false),
        error => Err(error),
    }
}
