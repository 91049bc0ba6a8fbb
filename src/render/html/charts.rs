//! The pictures of `report.html` and `compare`'s page, as small inline SVG (no script,
//! no network): the pass rate of each group of tasks (a tag, a repeat, a run), and how
//! the task durations are spread. Counted in the pass over the rows the page makes
//! anyway; a chart with nothing to compare (one group, no task) is not drawn.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::record::{TaskRow, TaskStatus};

/// Most bars of a pass-rate chart: the groups with the most tasks.
const MAX_BARS: usize = 16;

/// Upper bounds (seconds) of the duration buckets; the last is open.
const BUCKETS: [f64; 9] = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0];

/// Tasks passed and judged in a group.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Rate {
    pub(crate) passed: usize,
    pub(crate) judged: usize,
}

/// What the charts of a run count.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChartCounts {
    all: Rate,
    by_tag: BTreeMap<String, Rate>,
    by_repeat: BTreeMap<u32, Rate>,
    /// Per bucket: passed, not passed.
    durations: [(usize, usize); BUCKETS.len() + 1],
}

impl ChartCounts {
    /// Counts `r` (a task not run here, unsupported or unfinished, is not).
    pub(crate) fn add(&mut self, r: &TaskRow) {
        if !judged(r.status) {
            return;
        }
        let passed = r.status == TaskStatus::Passed;
        let count = |rate: &mut Rate| {
            rate.judged += 1;
            rate.passed += usize::from(passed);
        };
        count(&mut self.all);
        for tag in &r.tags {
            count(self.by_tag.entry(tag.clone()).or_default());
        }
        if let Some(repeat) = r.repeat {
            count(self.by_repeat.entry(repeat).or_default());
        }
        let bucket = BUCKETS
            .iter()
            .position(|b| r.duration_s < *b)
            .unwrap_or(BUCKETS.len());
        let (p, f) = &mut self.durations[bucket];
        *if passed { p } else { f } += 1;
    }

    /// The pictures, as SVG, each with its title.
    pub(crate) fn charts(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let tags: Vec<(String, Rate)> = self.by_tag.iter().map(|(t, r)| (t.clone(), *r)).collect();
        if let Some(svg) = pass_rate_bars(&largest(tags)) {
            out.push(("Pass rate by tag".to_string(), svg));
        }
        let repeats: Vec<(String, Rate)> = self
            .by_repeat
            .iter()
            .map(|(n, r)| (format!("repeat {n}"), *r))
            .collect();
        if let Some(svg) = pass_rate_bars(&largest(repeats)) {
            out.push(("Pass rate by repeat".to_string(), svg));
        }
        if let Some(svg) = duration_histogram(&self.durations) {
            out.push(("Task durations".to_string(), svg));
        }
        out
    }
}

/// The pictures of the comparison of runs `a` and `b`: their pass rates, overall and
/// by tag, side by side, each one's task durations, and the pass rate of the runs of
/// `series` (name, pass rate; in order) when there are several.
pub(crate) fn comparison_charts(
    a: &ChartCounts,
    b: &ChartCounts,
    series: &[(String, f64)],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut groups = vec![("A".to_string(), a.all), ("B".to_string(), b.all)];
    let mut tags: Vec<(String, Rate)> = a
        .by_tag
        .iter()
        .chain(&b.by_tag)
        .map(|(t, _)| t.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|t| {
            let size =
                a.by_tag.get(&t).map_or(0, |r| r.judged) + b.by_tag.get(&t).map_or(0, |r| r.judged);
            (
                t,
                Rate {
                    passed: 0,
                    judged: size,
                },
            )
        })
        .collect();
    tags = largest_n(tags, MAX_BARS / 2 - 1);
    for (tag, _) in tags {
        for (side, counts) in [("A", a), ("B", b)] {
            let rate = counts.by_tag.get(&tag).copied().unwrap_or_default();
            groups.push((format!("{side} · {tag}"), rate));
        }
    }
    if let Some(svg) = pass_rate_bars(&groups) {
        out.push(("Pass rate, A and B".to_string(), svg));
    }
    for (side, counts) in [("A", a), ("B", b)] {
        if let Some(svg) = duration_histogram(&counts.durations) {
            out.push((format!("Task durations, {side}"), svg));
        }
    }
    if let Some(svg) = pass_rate_line(series) {
        out.push((
            "Pass rate of the runs beside B, oldest first".to_string(),
            svg,
        ));
    }
    out
}

/// A status that says whether the task did what it was asked.
fn judged(status: TaskStatus) -> bool {
    !matches!(
        status,
        TaskStatus::Unsupported | TaskStatus::Pending | TaskStatus::Running
    )
}

/// The [`MAX_BARS`] groups with the most tasks, in their order.
fn largest(groups: Vec<(String, Rate)>) -> Vec<(String, Rate)> {
    largest_n(groups, MAX_BARS)
}

/// The `n` groups with the most tasks (the first in order among equals), in their order.
fn largest_n(groups: Vec<(String, Rate)>, n: usize) -> Vec<(String, Rate)> {
    if groups.len() <= n {
        return groups;
    }
    let mut ranked: Vec<(usize, (String, Rate))> = groups.into_iter().enumerate().collect();
    ranked.sort_by(|(i, a), (j, b)| b.1.judged.cmp(&a.1.judged).then(i.cmp(j)));
    ranked.truncate(n);
    ranked.sort_by_key(|(i, _)| *i);
    ranked.into_iter().map(|(_, g)| g).collect()
}

/// One bar per group: its pass rate, and `passed/judged`; none for fewer than two
/// groups.
pub(crate) fn pass_rate_bars(groups: &[(String, Rate)]) -> Option<String> {
    if groups.len() < 2 {
        return None;
    }
    let (label_w, bar_w, row_h) = (150.0, 300.0, 22.0);
    let height = row_h * groups.len() as f64 + 6.0;
    let width = label_w + bar_w + 110.0;
    let mut svg = open(width, height, "pass rate of each group");
    for (i, (label, rate)) in groups.iter().enumerate() {
        let y = 3.0 + row_h * i as f64;
        let share = if rate.judged == 0 {
            0.0
        } else {
            rate.passed as f64 / rate.judged as f64
        };
        let _ = write!(
            svg,
            "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{:.1}\" width=\"{bar_w}\" height=\"14\" class=\"track\"/>\
             <rect x=\"{label_w}\" y=\"{:.1}\" width=\"{:.1}\" height=\"14\" class=\"pass\"><title>{}: {}/{} passed</title></rect>\
             <text x=\"{:.0}\" y=\"{:.1}\">{:.0}% ({}/{})</text>",
            label_w - 6.0,
            y + 12.0,
            escape(&crate::text::shorten(label, 22)),
            y + 1.0,
            y + 1.0,
            bar_w * share,
            escape(label),
            rate.passed,
            rate.judged,
            label_w + bar_w + 6.0,
            y + 12.0,
            share * 100.0,
            rate.passed,
            rate.judged,
        );
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// The tasks in each duration bucket, passed and not stacked; none without tasks.
fn duration_histogram(buckets: &[(usize, usize); BUCKETS.len() + 1]) -> Option<String> {
    let most = buckets.iter().map(|(p, f)| p + f).max().unwrap_or(0);
    if most == 0 {
        return None;
    }
    let (col_w, plot_h, top, bottom) = (64.0, 120.0, 16.0, 34.0);
    let width = col_w * buckets.len() as f64 + 10.0;
    let mut svg = open(width, top + plot_h + bottom, "how many tasks took how long");
    for (i, (passed, failed)) in buckets.iter().enumerate() {
        let x = 5.0 + col_w * i as f64;
        let h = |n: usize| plot_h * n as f64 / most as f64;
        let base = top + plot_h;
        let label = match i {
            0 => format!("<{}s", seconds(BUCKETS[0])),
            i if i == BUCKETS.len() => format!("≥{}s", seconds(BUCKETS[i - 1])),
            i => format!("{}–{}s", seconds(BUCKETS[i - 1]), seconds(BUCKETS[i])),
        };
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" class=\"pass\"><title>{label}: {passed} passed</title></rect>\
             <rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" class=\"fail\"><title>{label}: {failed} did not pass</title></rect>",
            x + 4.0,
            base - h(*passed),
            col_w - 8.0,
            h(*passed),
            x + 4.0,
            base - h(*passed) - h(*failed),
            col_w - 8.0,
            h(*failed),
        );
        if passed + failed > 0 {
            let _ = write!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x + col_w / 2.0,
                base - h(*passed) - h(*failed) - 3.0,
                passed + failed
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"axis\">{label}</text>",
            x + col_w / 2.0,
            base + 16.0,
        );
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// The pass rate of each run in a series, in order, as a line; none for fewer than two.
pub(crate) fn pass_rate_line(runs: &[(String, f64)]) -> Option<String> {
    if runs.len() < 2 {
        return None;
    }
    let (left, step, plot_h, top, bottom) = (40.0, 70.0, 120.0, 12.0, 34.0);
    let width = left + step * (runs.len() - 1) as f64 + 60.0;
    let mut svg = open(
        width,
        top + plot_h + bottom,
        "pass rate of each run, in order",
    );
    let y = |rate: f64| top + plot_h * (1.0 - rate.clamp(0.0, 1.0));
    for tick in [0.0, 0.5, 1.0] {
        let _ = write!(
            svg,
            "<line x1=\"{left}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" class=\"axis\">{:.0}%</text>",
            width - 20.0,
            y(tick),
            y(tick),
            left - 4.0,
            y(tick) + 4.0,
            tick * 100.0
        );
    }
    let points: Vec<String> = runs
        .iter()
        .enumerate()
        .map(|(i, (_, rate))| format!("{:.1},{:.1}", left + step * i as f64, y(*rate)))
        .collect();
    let _ = write!(
        svg,
        "<polyline points=\"{}\" class=\"line\"/>",
        points.join(" ")
    );
    for (i, (name, rate)) in runs.iter().enumerate() {
        let x = left + step * i as f64;
        let _ = write!(
            svg,
            "<circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"4\" class=\"dot\"><title>{}: {:.1}%</title></circle>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"axis\">{}</text>",
            y(*rate),
            escape(name),
            rate * 100.0,
            top + plot_h + 16.0,
            escape(&crate::text::shorten(name, 10)),
        );
    }
    svg.push_str("</svg>");
    Some(svg)
}

fn open(width: f64, height: f64, label: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" aria-label=\"{label}\" \
         width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\">"
    )
}

/// `0.1`, `3`, `1000`.
fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.1}")
    } else {
        format!("{s:.0}")
    }
}

/// Text for an SVG element or attribute, escaped as the templates escape it.
fn escape(text: &str) -> String {
    crate::render::format::escaped(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(passed: usize, judged: usize) -> Rate {
        Rate { passed, judged }
    }

    #[test]
    fn a_bar_per_group_with_its_rate_and_the_labels_escaped() {
        let svg =
            pass_rate_bars(&[("csv".into(), rate(3, 4)), ("<script>".into(), rate(0, 2))]).unwrap();
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"), "{svg}");
        assert!(svg.contains("75% (3/4)"), "{svg}");
        assert!(svg.contains("0% (0/2)"), "{svg}");
        assert!(svg.contains("width=\"225.0\""), "{svg}");
        assert!(
            svg.contains("&lt;script&gt;") && !svg.contains("<script>"),
            "{svg}"
        );
        // One group is nothing to compare.
        assert_eq!(pass_rate_bars(&[("a".into(), rate(1, 1))]), None);
    }

    #[test]
    fn durations_fall_in_their_buckets_passed_and_not() {
        let mut buckets = [(0, 0); BUCKETS.len() + 1];
        buckets[2] = (3, 1);
        buckets[BUCKETS.len()] = (0, 2);
        let svg = duration_histogram(&buckets).unwrap();
        assert!(svg.contains("0.3–1s: 3 passed"), "{svg}");
        assert!(svg.contains("0.3–1s: 1 did not pass"), "{svg}");
        assert!(svg.contains("≥1000s: 2 did not pass"), "{svg}");
        assert_eq!(duration_histogram(&[(0, 0); BUCKETS.len() + 1]), None);
    }

    #[test]
    fn a_series_is_a_line_through_each_run() {
        let svg = pass_rate_line(&[("mon".into(), 0.5), ("tue".into(), 1.0)]).unwrap();
        assert!(svg.contains("points=\"40.0,72.0 110.0,12.0\""), "{svg}");
        assert!(svg.contains("<title>tue: 100.0%</title>"), "{svg}");
        assert_eq!(pass_rate_line(&[("one".into(), 0.5)]), None);
    }

    #[test]
    fn the_largest_group_is_kept_among_many_small_ones() {
        let mut groups: Vec<(String, Rate)> =
            (0..16).map(|i| (format!("a{i:02}"), rate(1, 1))).collect();
        groups.push(("zzz".into(), rate(5, 10)));
        let kept = largest(groups);
        assert_eq!(kept.len(), MAX_BARS);
        assert_eq!(kept.last().unwrap().0, "zzz");
        assert_eq!(kept[0].0, "a00");
    }

    #[test]
    fn only_the_largest_groups_are_drawn() {
        let groups: Vec<(String, Rate)> = (0..40)
            .map(|i| (format!("t{i:02}"), rate(1, i + 1)))
            .collect();
        let kept = largest(groups);
        assert_eq!(kept.len(), MAX_BARS);
        assert!(kept.iter().all(|(_, r)| r.judged > 40 - MAX_BARS));
    }
}
