//! Charts of results, as SVG files a reader opens in any browser:
//! `muster odds --svg` (each outcome's chance of each value as bars, their
//! 95% intervals when sampled, and for numbers the chance of at least each
//! value as a line on a second axis), `simulate --svg` (each army's wins,
//! the draws and the games left at the turn limit with their 95% intervals;
//! game length; losses by unit type) and `compare --svg` (each measure's
//! B - A with its 95% interval, the moved ones marked).
//!
//! Written as SVG text by hand, as [`crate::cli::svg`] draws the table, rather
//! than with a plotting crate: these charts are bars, whiskers and labels;
//! the text is the same byte for byte on every machine (no fonts measured,
//! every number printed at a fixed precision), so tests can pin it; and the
//! build gains nothing. Each chart says it was made here (`is_chart`), so
//! that `--svg FILE` replaces only a chart this program wrote.

use crate::cli::compare::{Comparison, Kind};
use crate::cli::odds_report::Report;
use crate::cli::simulate::Summary;
use crate::cli::svg::esc;
use std::fmt::Write;

/// What every chart carries on its root element, to be known again.
const GENERATOR: &str = r#"data-generator="muster chart""#;
/// The width of every chart, px.
const WIDTH: f64 = 960.0;
/// The left and right edges of a row panel's plotting area (room for row
/// labels on the left, values on the right).
const LEFT: f64 = 270.0;
const RIGHT: f64 = 700.0;
/// The left and right edges of a column panel's plotting area (room for
/// an axis each side).
const COL_LEFT: f64 = 80.0;
const COL_RIGHT: f64 = 880.0;
/// The height of a column panel's plotting area, px.
const PLOT_HEIGHT: f64 = 180.0;
/// The height of one row of a row panel, px.
const ROW: f64 = 22.0;
/// About how wide a character of 11 px text is, px (to thin out labels).
const CHAR: f64 = 6.2;
/// The fill of bars, of the "at least" line, and of moved measures.
const BAR: &str = "#4a72b0";
const LINE: &str = "#c0392b";
const MOVED: &str = "#c0392b";
const STILL: &str = "#777";

/// Whether a file's first bytes are a chart this program wrote.
pub fn is_chart(head: &str) -> bool {
    head.starts_with("<svg") && head.contains(GENERATOR)
}

/// A chart being drawn: its body, and how far down it reaches.
struct Chart {
    body: String,
    y: f64,
}

/// One column of a column panel.
struct Column {
    label: String,
    value: f64,
    /// The 95% interval of `value`, drawn as a whisker.
    whisker: Option<(f64, f64)>,
    /// What a pointer over the bar shows.
    tip: String,
}

/// One row of a row panel: a bar from 0 (or a dot, for differences).
struct Row {
    label: String,
    value: f64,
    whisker: Option<(f64, f64)>,
    /// The value as written at the end of the row.
    text: String,
    /// Drawn in the moved colour (compare).
    marked: bool,
}

/// How the axis of a panel writes its values.
#[derive(Clone, Copy)]
enum Scale {
    /// Shares of 1, written as percentages.
    Percent,
    /// Plain numbers (games, turns, units).
    Number,
    /// Percentage points (differences of shares), signed.
    Points,
    /// Signed plain numbers (differences of means).
    Signed,
}

impl Scale {
    /// A value as written over its bar.
    fn value(self, v: f64) -> String {
        match self {
            Scale::Percent => pct(v),
            Scale::Number => format!("{v}"),
            Scale::Points => format!("{:+.1}", v * 100.0),
            Scale::Signed => format!("{v:+.2}"),
        }
    }

    fn tick(self, v: f64, step: f64) -> String {
        let decimals = |unit: f64| {
            if step * unit >= 1.0 {
                0
            } else if step * unit >= 0.1 {
                1
            } else {
                2
            }
        };
        match self {
            Scale::Percent => format!("{:.*}%", decimals(100.0), v * 100.0),
            Scale::Number => format!("{:.*}", decimals(1.0), v),
            Scale::Points => format!("{:+.*}", decimals(100.0), v * 100.0),
            Scale::Signed => format!("{:+.*}", decimals(1.0), v),
        }
    }
}

/// A round step for an axis reaching `max` in about four steps (1, 2, 2.5
/// or 5 times a power of ten), and the top of the axis (a whole number of
/// steps at or above `max`).
fn nice(max: f64) -> (f64, f64) {
    if max.is_nan() || max <= 0.0 || max.is_infinite() {
        return (0.25, 1.0);
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    let top = (max / step - 1e-9).ceil().max(1.0) * step;
    (step, top)
}

/// A number at two decimals, for coordinates (the same text everywhere).
fn px(v: f64) -> String {
    format!("{v:.2}")
}

impl Chart {
    fn new(title: &str, subtitle: &str) -> Chart {
        let mut c = Chart {
            body: String::new(),
            y: 28.0,
        };
        let _ = writeln!(
            c.body,
            r#"<text class="title" x="20" y="{}" font-size="16" font-weight="bold">{}</text>"#,
            px(c.y),
            esc(title)
        );
        for line in wrap(subtitle, ((WIDTH - 40.0) / (CHAR * 1.1)) as usize) {
            c.y += 17.0;
            let _ = writeln!(
                c.body,
                r##"<text class="subtitle" x="20" y="{}" font-size="12" fill="#444">{}</text>"##,
                px(c.y),
                esc(&line)
            );
        }
        c.y += 14.0;
        c
    }

    /// A panel's heading, on a line of its own.
    fn heading(&mut self, text: &str) {
        self.y += 22.0;
        let _ = writeln!(
            self.body,
            r#"<text class="heading" x="20" y="{}" font-size="13" font-weight="bold">{}</text>"#,
            px(self.y),
            esc(text)
        );
        self.y += 8.0;
    }

    /// A note under a panel (what the whiskers mean, a scale).
    fn note(&mut self, text: &str) {
        self.y += 16.0;
        let _ = writeln!(
            self.body,
            r##"<text class="note" x="20" y="{}" font-size="11" fill="#555">{}</text>"##,
            px(self.y),
            esc(text)
        );
    }

    /// A column panel: one bar per column on a left axis, and, if given, a
    /// line through a second value per column on a right axis of 0-100%
    /// (the chance of at least each value).
    fn columns(&mut self, scale: Scale, cols: &[Column], line: Option<(&str, &[f64])>) {
        let top_y = self.y + 10.0;
        let base_y = top_y + PLOT_HEIGHT;
        let max = cols
            .iter()
            .map(|c| c.whisker.map_or(c.value, |(_, h)| h.max(c.value)))
            .fold(0.0, f64::max);
        let (step, top) = nice(max);
        let y_of = |v: f64| base_y - (v / top).clamp(0.0, 1.0) * PLOT_HEIGHT;
        self.axis_left(scale, step, top, top_y, base_y);
        let n = cols.len().max(1) as f64;
        let slot = (COL_RIGHT - COL_LEFT) / n;
        let width = (slot * 0.8).max(1.0);
        // Label every k-th column when there is no room for all.
        let longest = cols
            .iter()
            .map(|c| c.label.chars().count())
            .max()
            .unwrap_or(1) as f64;
        let every = ((longest * CHAR + 4.0) / slot).ceil().max(1.0) as usize;
        for (i, c) in cols.iter().enumerate() {
            let x = COL_LEFT + slot * i as f64 + (slot - width) / 2.0;
            let y = y_of(c.value);
            let _ = writeln!(
                self.body,
                r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{BAR}" data-value="{}"><title>{}</title></rect>"#,
                px(x),
                px(y),
                px(width),
                px(base_y - y),
                c.value,
                esc(&c.tip)
            );
            if let Some((lo, hi)) = c.whisker {
                let mid = x + width / 2.0;
                self.whisker_v(mid, y_of(lo), y_of(hi), (width / 2.0).min(6.0));
            }
            if slot >= 40.0 && c.whisker.is_none() {
                let _ = writeln!(
                    self.body,
                    r##"<text class="bar-value" x="{}" y="{}" font-size="10" text-anchor="middle" fill="#333">{}</text>"##,
                    px(x + width / 2.0),
                    px(y - 4.0),
                    scale.value(c.value)
                );
            }
            if i % every == 0 {
                let _ = writeln!(
                    self.body,
                    r#"<text class="tick" x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>"#,
                    px(x + width / 2.0),
                    px(base_y + 14.0),
                    esc(&c.label)
                );
            }
        }
        if let Some((name, values)) = line {
            let r_of = |v: f64| base_y - v.clamp(0.0, 1.0) * PLOT_HEIGHT;
            let points: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    format!(
                        "{},{}",
                        px(COL_LEFT + slot * (i as f64 + 0.5)),
                        px(r_of(*v))
                    )
                })
                .collect();
            let _ = writeln!(
                self.body,
                r#"<polyline class="at-least" points="{}" fill="none" stroke="{LINE}" stroke-width="2"><title>{}</title></polyline>"#,
                points.join(" "),
                esc(name)
            );
            if slot >= 8.0 {
                for ((p, v), c) in points.iter().zip(values).zip(cols) {
                    let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
                    let _ = writeln!(
                        self.body,
                        r#"<circle class="at-least-point" cx="{x}" cy="{y}" r="3" fill="{LINE}"><title>{} {}: {}</title></circle>"#,
                        esc(name),
                        esc(&c.label),
                        pct(*v)
                    );
                }
            }
            for q in 0..=4 {
                let v = q as f64 / 4.0;
                let _ = writeln!(
                    self.body,
                    r#"<text class="tick right" x="{}" y="{}" font-size="10" fill="{LINE}">{}%</text>"#,
                    px(COL_RIGHT + 6.0),
                    px(r_of(v) + 3.0),
                    q * 25
                );
            }
            let _ = writeln!(
                self.body,
                r#"<text class="axis-name right" x="{}" y="{}" font-size="11" fill="{LINE}">{}</text>"#,
                px(COL_RIGHT + 6.0),
                px(top_y - 12.0),
                esc(name)
            );
        }
        self.y = base_y + 20.0;
    }

    /// The left axis of a column panel: a tick and a faint line per step.
    fn axis_left(&mut self, scale: Scale, step: f64, top: f64, top_y: f64, base_y: f64) {
        let steps = (top / step).round() as usize;
        for s in 0..=steps {
            let v = step * s as f64;
            let y = base_y - v / top * (base_y - top_y);
            let _ = writeln!(
                self.body,
                r##"<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ddd"/>"##,
                px(COL_LEFT),
                px(y),
                px(COL_RIGHT),
                px(y)
            );
            let _ = writeln!(
                self.body,
                r#"<text class="tick" x="{}" y="{}" font-size="10" text-anchor="end">{}</text>"#,
                px(COL_LEFT - 6.0),
                px(y + 3.0),
                scale.tick(v, step)
            );
        }
        let _ = writeln!(
            self.body,
            r##"<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>"##,
            px(COL_LEFT),
            px(base_y),
            px(COL_RIGHT),
            px(base_y)
        );
    }

    /// A row panel: each row's label on the left and a bar (or, for
    /// differences, a dot) against a horizontal axis from `lo` to `hi`.
    fn rows(&mut self, scale: Scale, rows: &[Row], span: (f64, f64), dots: bool) {
        let (lo, hi) = span;
        let x_of = |v: f64| LEFT + ((v - lo) / (hi - lo)).clamp(0.0, 1.0) * (RIGHT - LEFT);
        let top_y = self.y + 4.0;
        let bottom = top_y + ROW * rows.len() as f64;
        let (step, _) = nice((hi - lo).abs());
        // The grid: every step from lo to hi, and a strong line at 0.
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        for k in first..=last {
            let v = k as f64 * step;
            let x = x_of(v);
            let stroke = if k == 0 { "#333" } else { "#ddd" };
            let _ = writeln!(
                self.body,
                r#"<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}"/>"#,
                px(x),
                px(top_y),
                px(x),
                px(bottom)
            );
            let _ = writeln!(
                self.body,
                r#"<text class="tick" x="{}" y="{}" font-size="10" text-anchor="middle">{}</text>"#,
                px(x),
                px(bottom + 12.0),
                scale.tick(v, step)
            );
        }
        for (i, r) in rows.iter().enumerate() {
            let mid = top_y + ROW * i as f64 + ROW / 2.0;
            let colour = if r.marked { MOVED } else { BAR };
            let label_colour = if r.marked { MOVED } else { "#222" };
            let _ = writeln!(
                self.body,
                r#"<text class="label" x="{}" y="{}" font-size="11" text-anchor="end" fill="{label_colour}">{}</text>"#,
                px(LEFT - 8.0),
                px(mid + 4.0),
                esc(&clip(&r.label, ((LEFT - 28.0) / CHAR) as usize))
            );
            if dots {
                let _ = writeln!(
                    self.body,
                    r#"<circle class="dot" cx="{}" cy="{}" r="4" fill="{}" data-value="{}"><title>{}: {}</title></circle>"#,
                    px(x_of(r.value)),
                    px(mid),
                    if r.marked { MOVED } else { STILL },
                    r.value,
                    esc(&r.label),
                    esc(&r.text)
                );
            } else {
                let (a, b) = (x_of(0f64.max(lo)), x_of(r.value));
                let _ = writeln!(
                    self.body,
                    r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{colour}" data-value="{}"><title>{}: {}</title></rect>"#,
                    px(a.min(b)),
                    px(mid - ROW * 0.35),
                    px((b - a).abs()),
                    px(ROW * 0.7),
                    r.value,
                    esc(&r.label),
                    esc(&r.text)
                );
            }
            if let Some((wl, wh)) = r.whisker {
                self.whisker_h(x_of(wl), x_of(wh), mid, 5.0);
            }
            let _ = writeln!(
                self.body,
                r#"<text class="value" x="{}" y="{}" font-size="11" fill="{label_colour}">{}</text>"#,
                px(RIGHT + 8.0),
                px(mid + 4.0),
                esc(&r.text)
            );
        }
        self.y = bottom + 14.0;
    }

    /// A vertical whisker from `y1` to `y2` at `x`, capped `cap` each side.
    fn whisker_v(&mut self, x: f64, y1: f64, y2: f64, cap: f64) {
        let _ = writeln!(
            self.body,
            r##"<path class="whisker" d="M{a},{y1} H{b} M{x},{y1} V{y2} M{a},{y2} H{b}" stroke="#222" fill="none"/>"##,
            a = px(x - cap),
            b = px(x + cap),
            x = px(x),
            y1 = px(y1),
            y2 = px(y2)
        );
    }

    /// A horizontal whisker from `x1` to `x2` at `y`.
    fn whisker_h(&mut self, x1: f64, x2: f64, y: f64, cap: f64) {
        let _ = writeln!(
            self.body,
            r##"<path class="whisker" d="M{x1},{a} V{b} M{x1},{y} H{x2} M{x2},{a} V{b}" stroke="#222" fill="none"/>"##,
            a = px(y - cap),
            b = px(y + cap),
            x1 = px(x1),
            x2 = px(x2),
            y = px(y)
        );
    }

    /// The whole SVG document.
    fn finish(self, title: &str) -> String {
        let height = self.y + 16.0;
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" {GENERATOR} width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">\n<title>{t}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{body}</svg>\n",
            w = px(WIDTH),
            h = px(height),
            t = esc(title),
            body = self.body
        )
    }
}

/// `s` cut to `n` characters by an ellipsis in the middle (a measure's
/// end, "loses Horse", says as much as its start).
fn clip(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        return s.to_string();
    }
    let keep = n.saturating_sub(1);
    let head = keep / 2;
    let tail = keep - head;
    let mut c: String = s.chars().take(head).collect();
    c.push('…');
    c.extend(s.chars().skip(len - tail));
    c
}

/// `s` in lines of at most about `n` characters, broken at spaces.
fn wrap(s: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > n {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A share as the text of a chart: "12.3%".
fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// The chart of a `muster odds` answer: a panel per outcome.
pub fn odds(report: &Report, ruleset: &str, description: Option<&str>) -> String {
    let title = format!("{} — {}", report.procedure, ruleset);
    let how = match &report.method {
        crate::run::odds::Method::Sampled { samples, .. } => {
            format!("sampled: {samples} samples; whiskers are 95% intervals")
        }
        crate::run::odds::Method::Exact => "exact".to_string(),
        crate::run::odds::Method::Scripted => "scripted dice".to_string(),
    };
    let sub = match description {
        Some(d) => format!("{d} ({how})"),
        None => how,
    };
    let mut c = Chart::new(&title, &sub);
    for oc in &report.outcomes {
        let heading = match &oc.mean {
            Some(m) => format!("{}  (mean {:.3})", oc.name, m.to_f64()),
            None => oc.name.clone(),
        };
        c.heading(&heading);
        let cols: Vec<Column> = oc
            .rows
            .iter()
            .map(|r| {
                let p = r.p.to_f64();
                let exact =
                    r.p.exact_text()
                        .map(|t| format!(" = {t}"))
                        .unwrap_or_default();
                Column {
                    label: r.label.clone(),
                    value: p,
                    whisker: r.interval,
                    tip: format!("{} {}: {}{exact}", oc.name, r.label, pct(p)),
                }
            })
            .collect();
        let at_least: Option<Vec<f64>> = oc
            .rows
            .iter()
            .map(|r| r.at_least.as_ref().map(|p| p.to_f64()))
            .collect();
        let line = at_least.as_deref().map(|v| ("at least", v));
        c.columns(Scale::Percent, &cols, line);
    }
    c.finish(&title)
}

/// The chart of a `muster simulate` summary: results, game length, losses.
pub fn simulate(s: &Summary, ruleset: &str, scenario: &str) -> String {
    let title = ruleset.to_string();
    let sub = format!(
        "{scenario}: {} games, seed {}; whiskers are 95% intervals",
        s.games, s.seed
    );
    let mut c = Chart::new(&title, &sub);
    c.heading("Results (share of games)");
    let rate = |label: String, r: &crate::cli::simulate::Rate| Row {
        label,
        value: r.rate,
        whisker: Some((r.low, r.high)),
        text: format!("{} ({} games)", pct(r.rate), r.count),
        marked: false,
    };
    let mut rows: Vec<Row> = s
        .armies
        .iter()
        .zip(&s.wins)
        .map(|(a, r)| rate(format!("{a} wins"), r))
        .collect();
    rows.push(rate("draws".into(), &s.draws));
    rows.push(rate("undecided at the turn limit".into(), &s.turn_limit));
    c.rows(Scale::Percent, &rows, (0.0, 1.0), false);

    c.heading(&format!(
        "Game length (games by turns; mean {:.2}, median {})",
        s.mean_turns, s.median_turns
    ));
    let cols: Vec<Column> = s
        .length
        .iter()
        .map(|(t, g)| Column {
            label: t.to_string(),
            value: *g as f64,
            whisker: None,
            tip: format!("{t} turns: {g} games"),
        })
        .collect();
    c.columns(Scale::Number, &cols, None);

    for (army, losses) in s.armies.iter().zip(&s.losses) {
        c.heading(&format!("Losses of {army} (share of each type fielded)"));
        let rows: Vec<Row> = losses
            .iter()
            .map(|l| Row {
                label: l.unit_type.clone(),
                value: l.lost_share,
                whisker: None,
                text: format!("{:.2} of {} a game", l.mean_lost, l.fielded),
                marked: false,
            })
            .collect();
        c.rows(Scale::Percent, &rows, (0.0, 1.0), false);
    }
    c.finish(&title)
}

/// The chart of a `muster compare`: each measure's B - A with its
/// interval, a panel per kind of measure (each on its own scale).
pub fn compare(cmp: &Comparison, scenario: &str) -> String {
    let title = format!("{} → {}", cmp.rulesets[0], cmp.rulesets[1]);
    let sub = format!(
        "{scenario}: {} games under each, seed {}; B - A with its 95% interval; moved ones in red",
        cmp.games, cmp.seed
    );
    let mut c = Chart::new(&title, &sub);
    let groups = [
        (
            Kind::Share,
            "Results (B - A, percentage points)",
            Scale::Points,
        ),
        (Kind::Turns, "Game length (B - A, turns)", Scale::Signed),
        (Kind::Units, "Losses (B - A, units a game)", Scale::Signed),
    ];
    for (kind, heading, scale) in groups {
        let shifts: Vec<_> = cmp.shifts.iter().filter(|s| s.kind == kind).collect();
        if shifts.is_empty() {
            continue;
        }
        c.heading(heading);
        let reach = shifts
            .iter()
            .flat_map(|s| [s.low.abs(), s.high.abs(), s.diff.abs()])
            .fold(0.0, f64::max);
        let (_, top) = nice(reach);
        let show = |v: f64| match kind {
            Kind::Share => format!("{:+.1}", v * 100.0),
            _ => format!("{v:+.2}"),
        };
        let rows: Vec<Row> = shifts
            .iter()
            .map(|s| Row {
                label: s.measure.clone(),
                value: s.diff,
                whisker: Some((s.low, s.high)),
                text: format!(
                    "{} ({} to {}){}",
                    show(s.diff),
                    show(s.low),
                    show(s.high),
                    if s.moved { " moved" } else { "" }
                ),
                marked: s.moved,
            })
            .collect();
        c.rows(scale, &rows, (-top, top), true);
    }
    let moved = cmp.shifts.iter().filter(|s| s.moved).count();
    c.note(&format!(
        "{moved} of {} measures moved (their interval leaves out 0)",
        cmp.shifts.len()
    ));
    c.finish(&title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axes() {
        assert_eq!(nice(1.0), (0.25, 1.0));
        assert_eq!(nice(0.17), (0.05, 0.2));
        assert_eq!(nice(0.4), (0.1, 0.4));
        assert_eq!(nice(37.0), (10.0, 40.0));
        assert_eq!(nice(0.0), (0.25, 1.0));
        assert_eq!(nice(f64::NAN), (0.25, 1.0));
    }

    #[test]
    fn ticks() {
        assert_eq!(Scale::Percent.tick(0.05, 0.05), "5%");
        assert_eq!(Scale::Percent.tick(0.025, 0.0025), "2.5%");
        assert_eq!(Scale::Points.tick(-0.1, 0.05), "-10");
        assert_eq!(Scale::Signed.tick(0.5, 0.25), "+0.5");
        assert_eq!(Scale::Number.tick(40.0, 10.0), "40");
    }
}
