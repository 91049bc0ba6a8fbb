//! Work spread over threads where it is CPU-bound or waits on file reads, not async:
//! loading task files, reading a run's stored records back. One rayon pool for the
//! process, with more threads than CPUs, as reads from a cold cache wait on the disk
//! and several outstanding help most. Results keep the order of the input.

use std::sync::OnceLock;

use rayon::prelude::*;

/// The pool, made on first use; `None` when no thread could be started (then the work
/// runs on the caller's thread).
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, 8)
            * 2;
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("reader-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// `f` of every item of `items`, in order.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    match pool() {
        Some(pool) => pool.install(|| items.par_iter().map(f).collect()),
        None => items.iter().map(f).collect(),
    }
}

/// `f` of every item of `items`, taken, in order.
pub(crate) fn map_owned<T: Send, R: Send>(
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    match pool() {
        Some(pool) => pool.install(|| items.into_par_iter().map(f).collect()),
        None => items.into_iter().map(f).collect(),
    }
}

/// Items of a batch between two hand-backs of free memory in [`each_chunk`].
const HANDED_BACK_EVERY: usize = 64 * 1024;

/// Hands `items` to `each` a chunk of at most `size` at a time, in order. Each chunk's
/// room goes once `each` is done with it, and the memory freed goes back to the system
/// every [`HANDED_BACK_EVERY`] items: what a batch's chunks become (tasks loaded, rows
/// kept) never adds up with what they were.
pub(crate) fn each_chunk<T>(items: Vec<T>, size: usize, mut each: impl FnMut(Vec<T>)) {
    let mut since = 0;
    for chunk in chunks(items, size) {
        since += chunk.len();
        if since >= HANDED_BACK_EVERY {
            crate::resources::release_free_memory();
            since = 0;
        }
        each(chunk);
    }
}

/// `items` as chunks of at most `size`, in order. Each chunk is cut from the end of the
/// list, which is then shrunk: the whole list is never held twice.
fn chunks<T>(mut items: Vec<T>, size: usize) -> Vec<Vec<T>> {
    let size = size.max(1);
    let mut chunks = Vec::with_capacity(items.len().div_ceil(size));
    while items.len() > size {
        let tail = items.split_off((items.len() - 1) / size * size);
        items.shrink_to_fit();
        chunks.push(tail);
    }
    chunks.push(items);
    chunks.reverse();
    chunks
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_order_of_the_input() {
        let items: Vec<u32> = (0..10_000).collect();
        let doubled = super::map(&items, |i| i * 2);
        assert!(doubled.iter().enumerate().all(|(i, d)| *d == i as u32 * 2));
        let names = super::map_owned(items, |i| i.to_string());
        assert_eq!(names[9_999], "9999");
    }

    #[test]
    fn chunks_keep_every_item_in_order() {
        for (n, size) in [(0, 4), (3, 4), (4, 4), (5, 4), (17, 4), (64, 16)] {
            let items: Vec<usize> = (0..n).collect();
            let chunks = super::chunks(items, size);
            assert!(chunks.iter().all(|c| c.len() <= size), "{n} by {size}");
            let joined: Vec<usize> = chunks.into_iter().flatten().collect();
            assert_eq!(joined, (0..n).collect::<Vec<_>>(), "{n} by {size}");
        }
        let mut handed = Vec::new();
        super::each_chunk((0..200_000).collect(), 4096, |chunk| {
            assert!(chunk.len() <= 4096);
            handed.extend(chunk);
        });
        assert_eq!(handed, (0..200_000).collect::<Vec<usize>>());
    }
}
