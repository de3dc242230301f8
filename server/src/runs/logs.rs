//! Bounded capture of a child's stdout or stderr.
//!
//! The log file keeps the first part of the stream; a ring keeps the most recent part. When
//! the stream is longer than the file's share, the file ends with a marker saying how many
//! bytes were omitted, then the tail. Memory and disk stay bounded whatever the child prints,
//! and the reader never stops draining the pipe, so a flooding child cannot block.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[cfg(test)]
use tokio::io::{AsyncRead, AsyncReadExt};

#[derive(Debug)]
struct LogState {
    path: PathBuf,
    file: Option<fs_err::File>,
    head_cap: u64,
    head_written: u64,
    total: u64,
    ring: VecDeque<u8>,
    tail_cap: usize,
    finished: bool,
}

/// A bounded log being captured (cheap to clone; clones share the state).
#[derive(Debug, Clone)]
pub struct LogCapture(Arc<Mutex<LogState>>);

/// The end of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTail {
    pub text: String,
    /// Bytes the stream carried in all.
    pub total_bytes: u64,
    /// True when `text` is not the whole stream.
    pub truncated: bool,
}

impl LogCapture {
    /// Capture into `path`, keeping at most `max_bytes` in all (three quarters head, one
    /// quarter tail).
    pub fn create(path: &Path, max_bytes: u64) -> std::io::Result<LogCapture> {
        let file = fs_err::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let tail_cap = usize::try_from((max_bytes / 4).max(1)).unwrap_or(usize::MAX);
        Ok(LogCapture(Arc::new(Mutex::new(LogState {
            path: path.to_path_buf(),
            file: Some(file),
            head_cap: max_bytes - max_bytes / 4,
            head_written: 0,
            total: 0,
            ring: VecDeque::with_capacity(tail_cap.min(64 * 1024)),
            tail_cap,
            finished: false,
        }))))
    }

    pub(super) fn feed(&self, chunk: &[u8]) {
        let mut s = self.0.lock().expect("log lock");
        s.total += chunk.len() as u64;
        let room = s.head_cap.saturating_sub(s.head_written);
        let head = usize::try_from(room).unwrap_or(usize::MAX).min(chunk.len());
        if head > 0 {
            if let Some(f) = s.file.as_mut() {
                let _ = f.write_all(&chunk[..head]);
            }
            s.head_written += head as u64;
        }
        let cap = s.tail_cap;
        let take = chunk.len().min(cap);
        let overflow = (s.ring.len() + take).saturating_sub(cap);
        s.ring.drain(..overflow);
        s.ring.extend(&chunk[chunk.len() - take..]);
    }

    /// Read `reader` to its end, feeding the capture.
    #[cfg(test)]
    pub async fn pump(self, mut reader: impl AsyncRead + Unpin) {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => self.feed(&buf[..n]),
            }
        }
    }

    /// Close the file; when bytes were dropped, append the omission marker and the tail.
    pub fn finish(&self) {
        let mut s = self.0.lock().expect("log lock");
        if s.finished {
            return;
        }
        s.finished = true;
        let unwritten = s.total - s.head_written;
        if unwritten > 0 {
            let tail: Vec<u8> = s
                .ring
                .iter()
                .copied()
                .skip(
                    s.ring
                        .len()
                        .saturating_sub(usize::try_from(unwritten).unwrap_or(usize::MAX)),
                )
                .collect();
            let omitted = unwritten - tail.len() as u64;
            if let Some(f) = s.file.as_mut() {
                let _ = write!(
                    f,
                    "\n[scimcp: {omitted} bytes omitted; the last {} bytes follow]\n",
                    tail.len()
                );
                let _ = f.write_all(&tail);
            }
        }
        if let Some(f) = s.file.take() {
            let _ = f.sync_all();
        }
        let _ = &s.path;
    }

    /// The last `max` bytes seen so far.
    pub fn tail(&self, max: usize) -> LogTail {
        let s = self.0.lock().expect("log lock");
        let n = s.ring.len().min(max);
        let bytes: Vec<u8> = s.ring.iter().copied().skip(s.ring.len() - n).collect();
        LogTail {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            total_bytes: s.total,
            truncated: (n as u64) < s.total,
        }
    }
}

/// The last `max` bytes of a finished log file.
pub fn file_tail(path: &Path, max: usize) -> std::io::Result<LogTail> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = fs_err::File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(max as u64);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(LogTail {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        total_bytes: len,
        truncated: start > 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn flood_stays_bounded_and_keeps_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        let cap = LogCapture::create(&path, 1000).unwrap();
        let mut data = Vec::new();
        for i in 0..10_000u32 {
            data.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        cap.clone().pump(&data[..]).await;
        cap.finish();
        let written = fs_err::read_to_string(&path).unwrap();
        assert!(written.len() < 1200, "{}", written.len());
        assert!(written.starts_with("line 0\n"));
        assert!(written.ends_with("line 9999\n"));
        assert!(written.contains("bytes omitted"));
        let tail = cap.tail(20);
        assert!(tail.truncated);
        assert_eq!(tail.total_bytes, data.len() as u64);
        assert!(tail.text.ends_with("line 9999\n"));
    }

    #[tokio::test]
    async fn short_stream_is_kept_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        let cap = LogCapture::create(&path, 1000).unwrap();
        cap.clone().pump(&b"hello\n"[..]).await;
        cap.finish();
        assert_eq!(fs_err::read_to_string(&path).unwrap(), "hello\n");
        assert_eq!(file_tail(&path, 3).unwrap().text, "lo\n");
    }
}
