//! The jail binary's two event loops (a jail serving its commands, the factory serving
//! the runner) wait on the same two things: their control socket, and their children
//! ending (SIGCHLD, blocked and read through a signalfd so that it never interrupts a
//! write to the socket).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::error::SysError;

/// SIGCHLD as a descriptor to poll.
pub(crate) struct ChildSignals(OwnedFd);

/// What is ready after [`ChildSignals::wait`].
pub(crate) struct Ready {
    /// The control socket has something to read (or was closed).
    pub(crate) control: bool,
    /// Children have ended: their SIGCHLDs are read, reap them.
    pub(crate) children: bool,
}

impl ChildSignals {
    /// Blocks SIGCHLD for this process and opens a signalfd for it.
    pub(crate) fn open() -> Result<Self, SysError> {
        // SAFETY: plain signal-mask calls; the set is initialised before use.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(SysError::last("cannot watch child processes"));
            }
            Ok(Self(OwnedFd::from_raw_fd(fd)))
        }
    }

    /// Waits until `control` can be read or a child has ended (then its signals are
    /// read, so that the next wait waits again).
    pub(crate) fn wait(&self, control: RawFd) -> Ready {
        let mut fds = [
            libc::pollfd {
                fd: control,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.0.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll reads and writes the array it is given.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            // EINTR: nothing is ready; the caller waits again.
            return Ready {
                control: false,
                children: false,
            };
        }
        let children = fds[1].revents != 0;
        if children {
            self.drain();
        }
        Ready {
            control: fds[0].revents != 0,
            children,
        }
    }

    /// Reads the pending signals.
    pub(crate) fn drain(&self) {
        let mut info = [0u8; 128];
        // SAFETY: reads whole signalfd records into a buffer of one record's size;
        // non-blocking.
        while unsafe {
            libc::read(
                self.0.as_raw_fd(),
                info.as_mut_ptr() as *mut libc::c_void,
                info.len(),
            )
        } > 0
        {}
    }
}
