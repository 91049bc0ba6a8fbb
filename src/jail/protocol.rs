//! The conversation between the runner and a task's jail (`ufo-batch-jail`), over one
//! Unix stream socket: length-prefixed frames, and file descriptors (a command's output
//! pipes) passed alongside with `SCM_RIGHTS`. This file is shared, word for word, by the
//! runner and the jail binary, so it uses nothing but `std` and `libc`; each side uses
//! one direction of it.
#![allow(
    dead_code,
    reason = "shared by the runner and the jail binary; each uses one direction"
)]

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// The largest frame either side accepts (a command line is far smaller).
pub(crate) const MAX_FRAME: usize = 64 << 20;

/// What the runner asks.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Request {
    /// Start a command; its stdout and stderr are the two descriptors sent with it
    /// (after its stdin, when `stdin` is set).
    Run {
        /// The runner's number for it.
        id: u64,
        /// Program and arguments.
        argv: Vec<Vec<u8>>,
        /// `KEY=VALUE` entries: the command's whole environment.
        env: Vec<Vec<u8>>,
        /// Working directory.
        cwd: Vec<u8>,
        /// RLIMIT_AS in bytes (0: none).
        memory: u64,
        /// RLIMIT_DATA in bytes (0: none).
        data: u64,
        /// RLIMIT_CPU in seconds (0: none).
        cpu: u64,
        /// A descriptor for its stdin comes first (else it reads `/dev/null`).
        stdin: bool,
    },
    /// Kill command `id` and every process of its group.
    Kill {
        /// The command.
        id: u64,
    },
    /// Kill everything and end the jail.
    End,
    /// To the jail factory (`--zygote`): make a jail with these arguments (as the jail
    /// binary takes them), whose control socket is the descriptor sent with it.
    Make {
        /// The jail's arguments.
        args: Vec<Vec<u8>>,
    },
}

/// What the jail tells.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// The jail is set up and takes requests.
    Ready,
    /// The jail could not be set up (and ends).
    Fatal {
        /// Why.
        message: String,
    },
    /// Command `id` started.
    Started {
        /// The command.
        id: u64,
    },
    /// Command `id` could not start.
    SpawnFailed {
        /// The command.
        id: u64,
        /// Why.
        message: String,
    },
    /// Command `id`'s own process ended (processes it started may live on).
    Exited {
        /// The command.
        id: u64,
        /// Its exit code, when it exited.
        code: Option<i32>,
        /// The signal that ended it, when one did.
        signal: Option<i32>,
    },
    /// The jail ended everything; `left` processes were still running.
    Ended {
        /// Processes killed.
        left: u32,
    },
    /// From the jail factory: the jail asked for is process `pid`, whose pidfd comes
    /// with this frame.
    Made {
        /// Its process id.
        pid: u32,
    },
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn put_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(&n.to_le_bytes());
}

/// Reads fields off a frame.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.0.len() < n {
            return Err(bad("a frame ends early"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> io::Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let b = self.take(4)?;
        let n = u32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as usize;
        Ok(self.take(n)?.to_vec())
    }

    fn list(&mut self) -> io::Result<Vec<Vec<u8>>> {
        let n = self.u64()? as usize;
        if n > MAX_FRAME / 4 {
            return Err(bad("a list is too long"));
        }
        (0..n).map(|_| self.bytes()).collect()
    }

    fn text(&mut self) -> io::Result<String> {
        Ok(String::from_utf8_lossy(&self.bytes()?).into_owned())
    }

    fn signed(&mut self) -> io::Result<Option<i32>> {
        let n = self.u64()?;
        Ok((n != u64::MAX).then_some(n as i32))
    }
}

fn bad(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.to_string())
}

fn put_signed(out: &mut Vec<u8>, n: Option<i32>) {
    put_u64(out, n.map_or(u64::MAX, |n| n as u32 as u64));
}

impl Request {
    /// The frame's payload.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Self::Run {
                id,
                argv,
                env,
                cwd,
                memory,
                data,
                cpu,
                stdin,
            } => {
                out.push(1);
                put_u64(&mut out, *id);
                put_u64(&mut out, argv.len() as u64);
                argv.iter().for_each(|a| put(&mut out, a));
                put_u64(&mut out, env.len() as u64);
                env.iter().for_each(|e| put(&mut out, e));
                put(&mut out, cwd);
                put_u64(&mut out, *memory);
                put_u64(&mut out, *data);
                put_u64(&mut out, *cpu);
                out.push(u8::from(*stdin));
            }
            Self::Kill { id } => {
                out.push(2);
                put_u64(&mut out, *id);
            }
            Self::End => out.push(3),
            Self::Make { args } => {
                out.push(4);
                put_u64(&mut out, args.len() as u64);
                args.iter().for_each(|a| put(&mut out, a));
            }
        }
        out
    }

    /// A frame's payload, read back.
    pub(crate) fn decode(payload: &[u8]) -> io::Result<Self> {
        let mut r = Reader(payload);
        Ok(match r.u8()? {
            1 => Self::Run {
                id: r.u64()?,
                argv: r.list()?,
                env: r.list()?,
                cwd: r.bytes()?,
                memory: r.u64()?,
                data: r.u64()?,
                cpu: r.u64()?,
                stdin: r.u8()? != 0,
            },
            2 => Self::Kill { id: r.u64()? },
            3 => Self::End,
            4 => Self::Make { args: r.list()? },
            _ => return Err(bad("an unknown request")),
        })
    }
}

impl Event {
    /// The frame's payload.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Self::Ready => out.push(1),
            Self::Fatal { message } => {
                out.push(2);
                put(&mut out, message.as_bytes());
            }
            Self::Started { id } => {
                out.push(3);
                put_u64(&mut out, *id);
            }
            Self::SpawnFailed { id, message } => {
                out.push(4);
                put_u64(&mut out, *id);
                put(&mut out, message.as_bytes());
            }
            Self::Exited { id, code, signal } => {
                out.push(5);
                put_u64(&mut out, *id);
                put_signed(&mut out, *code);
                put_signed(&mut out, *signal);
            }
            Self::Ended { left } => {
                out.push(6);
                put_u64(&mut out, u64::from(*left));
            }
            Self::Made { pid } => {
                out.push(7);
                put_u64(&mut out, u64::from(*pid));
            }
        }
        out
    }

    /// A frame's payload, read back.
    pub(crate) fn decode(payload: &[u8]) -> io::Result<Self> {
        let mut r = Reader(payload);
        Ok(match r.u8()? {
            1 => Self::Ready,
            2 => Self::Fatal { message: r.text()? },
            3 => Self::Started { id: r.u64()? },
            4 => Self::SpawnFailed {
                id: r.u64()?,
                message: r.text()?,
            },
            5 => Self::Exited {
                id: r.u64()?,
                code: r.signed()?,
                signal: r.signed()?,
            },
            6 => Self::Ended {
                left: r.u64()? as u32,
            },
            7 => Self::Made {
                pid: r.u64()? as u32,
            },
            _ => return Err(bad("an unknown event")),
        })
    }
}

/// The bytes of a frame: the payload's length, then the payload.
pub(crate) fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 4);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Sends as much of `bytes` as the socket takes, with `fds` attached to the first byte.
/// Returns how many bytes went.
pub(crate) fn send_with_fds(socket: RawFd, bytes: &[u8], fds: &[RawFd]) -> io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of_val(fds) as u32) } as usize;
    let mut control = vec![0u8; space.max(1)];
    // SAFETY: msghdr is plain data; every pointer set below outlives the sendmsg call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = space as _;
        // SAFETY: the control buffer has room for one header and `fds` (CMSG_SPACE).
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of_val(fds) as u32) as _;
            std::ptr::copy_nonoverlapping(
                fds.as_ptr() as *const u8,
                libc::CMSG_DATA(cmsg),
                std::mem::size_of_val(fds),
            );
        }
    }
    // SAFETY: msg describes valid buffers; MSG_NOSIGNAL turns a closed peer into EPIPE.
    let sent = unsafe { libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL) };
    if sent < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(sent as usize)
    }
}

/// Receives bytes into `buf`, and any descriptors that came with them (close-on-exec).
/// Returns how many bytes (0: the peer closed).
pub(crate) fn recv_with_fds(
    socket: RawFd,
    buf: &mut [u8],
    fds: &mut Vec<OwnedFd>,
) -> io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let space = unsafe { libc::CMSG_SPACE((8 * std::mem::size_of::<RawFd>()) as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: as in send_with_fds.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = space as _;
    // SAFETY: msg describes valid buffers owned by this frame.
    let got = unsafe { libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel filled the control buffer; we walk it with the CMSG macros.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg) as *const RawFd;
                let n = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                    / std::mem::size_of::<RawFd>();
                for i in 0..n {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok(got as usize)
}

/// Frames arriving on a stream, with the descriptors that came with them, in order.
#[derive(Default)]
pub(crate) struct Inbox {
    bytes: Vec<u8>,
    /// Descriptors received, oldest first (each `Run` takes two).
    pub(crate) fds: std::collections::VecDeque<OwnedFd>,
}

impl Inbox {
    /// Adds received bytes and descriptors.
    pub(crate) fn push(&mut self, bytes: &[u8], fds: Vec<OwnedFd>) {
        self.bytes.extend_from_slice(bytes);
        self.fds.extend(fds);
    }

    /// The next whole frame's payload, if one has arrived.
    pub(crate) fn next_frame(&mut self) -> io::Result<Option<Vec<u8>>> {
        if self.bytes.len() < 4 {
            return Ok(None);
        }
        let n = u32::from_le_bytes([self.bytes[0], self.bytes[1], self.bytes[2], self.bytes[3]])
            as usize;
        if n > MAX_FRAME {
            return Err(bad("a frame is too large"));
        }
        if self.bytes.len() < 4 + n {
            return Ok(None);
        }
        let payload = self.bytes[4..4 + n].to_vec();
        self.bytes.drain(..4 + n);
        Ok(Some(payload))
    }
}
