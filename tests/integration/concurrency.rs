//! `--jobs N` really bounds how many sessions run at once.

use crate::helpers::{Project, shell_plan};

/// Each task records when it started and ended (nanoseconds) in its workspace.
fn timed_tasks(p: &Project, n: usize) {
    for i in 0..n {
        p.task(
            &format!("t{i:02}.json"),
            shell_plan(
                "timed",
                &["date +%s%N > start", "sleep 0.4", "date +%s%N > end"],
            ),
        );
    }
}

fn intervals(p: &Project, n: usize) -> Vec<(u128, u128)> {
    (0..n)
        .map(|i| {
            let ws = p.path().join(format!("results/proj/t{i:02}/workspace"));
            let read = |f: &str| {
                std::fs::read_to_string(ws.join(f))
                    .unwrap()
                    .trim()
                    .parse::<u128>()
                    .unwrap()
            };
            (read("start"), read("end"))
        })
        .collect()
}

/// The largest number of intervals open at one instant.
fn max_overlap(intervals: &[(u128, u128)]) -> usize {
    let mut points: Vec<(u128, i32)> = intervals
        .iter()
        .flat_map(|&(s, e)| [(s, 1), (e, -1)])
        .collect();
    // Ends sort before starts at the same instant.
    points.sort();
    let mut open = 0;
    let mut max = 0;
    for (_, delta) in points {
        open += delta;
        max = max.max(open);
    }
    max as usize
}

#[test]
fn jobs_bound_holds() {
    let p = Project::new();
    let n = 9;
    timed_tasks(&p, n);
    p.run(&["--jobs", "3"]).expect_code(0);
    let overlap = max_overlap(&intervals(&p, n));
    assert!(overlap <= 3, "{overlap} sessions ran at once with --jobs 3");
    assert!(
        overlap >= 2,
        "sessions never overlapped: the pool is not concurrent"
    );
}

#[test]
fn jobs_1_runs_one_at_a_time() {
    let p = Project::new();
    let n = 4;
    timed_tasks(&p, n);
    p.run(&["--jobs", "1"]).expect_code(0);
    assert_eq!(max_overlap(&intervals(&p, n)), 1);
}

#[test]
fn overlap_counting() {
    assert_eq!(max_overlap(&[(0, 10), (5, 15), (10, 20)]), 2);
    assert_eq!(max_overlap(&[(0, 1), (1, 2)]), 1);
}
