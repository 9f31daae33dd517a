//! A picture of the battlefield as an SVG string (no dependencies): the
//! table, its terrain coloured by kind (clipped to the table), and the units
//! as rotated bases with their front edges marked, their short names and
//! resolve (units off the table drawn faded, beneath the live ones); above
//! it the title and the sides, below it a key to the short names.
//!
//! The table is scaled to about 900 px wide and the y axis flipped, so that
//! y = 0 (the first army's base edge) is at the bottom of the picture and a
//! unit facing 0 faces up. Since compass bearings turn clockwise with y up,
//! and SVG's `rotate` turns clockwise with y down, a facing of `a` degrees
//! is drawn as `rotate(a)`.

use crate::run::battlefield::{Base, Pt, Shape};
use std::fmt::Write;

/// A piece of terrain to draw.
pub struct Feature<'a> {
    /// Its name, written on it.
    pub label: &'a str,
    /// The kind of terrain, which picks the colour: `woods`, `village`,
    /// `hill`, `difficult_hill`, `rough`, `river`, `road`, `fortification`
    /// (or names containing those words); anything else is grey.
    pub kind: &'a str,
    pub shape: &'a Shape,
}

/// A unit to draw.
pub struct UnitMark<'a> {
    /// Its full name (shown as the tooltip).
    pub label: &'a str,
    /// What is written on the base, e.g. "P+S3" (its type's short name,
    /// and what tells it from the others of its side).
    pub tag: &'a str,
    /// Its type's short name, e.g. "P+S", for the key.
    pub short: &'a str,
    /// What the short name stands for (its unit type), for the key.
    pub kind: &'a str,
    pub base: Base,
    /// Its side, which picks the colour: 0 blue, 1 red, then green,
    /// purple, orange.
    pub side: usize,
    /// The side's (army's) name, for the legend.
    pub side_name: &'a str,
    /// Routed or removed: drawn dashed and transparent.
    pub faded: bool,
    /// Its resolve, written after the short name.
    pub resolve: Option<i64>,
    /// A unit made of files: each file's bases, left to right (empty for
    /// a unit without files). Drawn as the base cut into files, each with
    /// its bases written at its front.
    pub files: &'a [i64],
}

/// A move of the turn drawn: from where a unit was to where it went.
pub struct Arrow {
    pub from: Pt,
    pub to: Pt,
    /// A charge (drawn solid and thick) rather than a move (dashed).
    pub charge: bool,
    /// The side of the unit that moved, which picks the colour.
    pub side: usize,
}

/// The width of the table in the picture, px.
const TABLE_PX: f64 = 900.0;
/// The margin around the table, px.
const MARGIN: f64 = 24.0;
/// The height of the title and sides lines above the table, px.
const LEGEND: f64 = 44.0;
/// The height of a line of the key below the table, px.
const KEY_LINE: f64 = 16.0;
/// About how wide a character of 11 px text is, px (to wrap the key).
const CHAR_PX: f64 = 6.6;

/// The colours of the sides, in turn.
const SIDE_COLOURS: [&str; 5] = ["#1f4fbf", "#c62a1f", "#1f8f3f", "#7d3c98", "#d9771a"];

/// How a kind of terrain is painted.
struct Style {
    fill: &'static str,
    stroke: &'static str,
    /// Outline width, px.
    outline: f64,
    /// Drawn as a band (a thick polyline) rather than an area.
    line: bool,
}

fn style(kind: &str) -> Style {
    let k = kind.to_ascii_lowercase();
    let has = |w: &str| k.contains(w);
    let area = |fill, stroke, outline| Style {
        fill,
        stroke,
        outline,
        line: false,
    };
    let band = |stroke| Style {
        fill: "none",
        stroke,
        outline: 0.0,
        line: true,
    };
    if has("difficult") && has("hill") {
        area("#c9cc8f", "#5e6127", 3.0)
    } else if has("hill") {
        area("#d4d7a0", "#9a9d5c", 1.5)
    } else if has("wood") || has("forest") {
        area("#5f9e4a", "#3b6e2c", 1.5)
    } else if has("village") || has("town") || has("build") {
        area("#a38f7a", "#6e5c4b", 1.5)
    } else if has("rough") || has("marsh") {
        area("#c9b98a", "#9c8b5d", 1.0)
    } else if has("river") || has("stream") || has("water") {
        band("#4f86d6")
    } else if has("road") || has("track") {
        band("#d2b48c")
    } else if has("fort") || has("works") || has("wall") {
        band("#333333")
    } else if has("hedge") {
        band("#2f6b2a")
    } else {
        area("#b0b0b0", "#808080", 1.0)
    }
}

/// Escape text for XML (and HTML: the battle page uses it too).
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            _ => o.push(c),
        }
    }
    o
}

/// A number for an attribute: two decimals, trailing zeros dropped.
fn num(v: f64) -> String {
    let s = format!("{:.2}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Table coordinates to picture coordinates.
struct View {
    scale: f64,
    depth: f64,
}

impl View {
    fn x(&self, x: f64) -> f64 {
        MARGIN + x * self.scale
    }

    fn y(&self, y: f64) -> f64 {
        MARGIN + LEGEND + (self.depth - y) * self.scale
    }

    fn pt(&self, p: Pt) -> String {
        format!("{},{}", num(self.x(p.x)), num(self.y(p.y)))
    }

    fn points(&self, ps: &[Pt]) -> String {
        ps.iter().map(|p| self.pt(*p)).collect::<Vec<_>>().join(" ")
    }
}

/// Draw the battlefield: a table `width` by `depth` (in the ruleset's
/// measure), its terrain, its units, the title and sides above, the key
/// below.
pub fn render(
    title: &str,
    width: f64,
    depth: f64,
    features: &[Feature],
    units: &[UnitMark],
) -> String {
    render_as("", title, width, depth, features, units, &[])
}

/// [`render`] with the moves of the turn drawn as arrows over the units,
/// the picture's element ids prefixed by `id` (pictures inline in one page
/// need ids of their own).
pub fn render_as(
    id: &str,
    title: &str,
    width: f64,
    depth: f64,
    features: &[Feature],
    units: &[UnitMark],
    arrows: &[Arrow],
) -> String {
    let width = if width > 0.0 { width } else { 1.0 };
    let depth = if depth > 0.0 { depth } else { 1.0 };
    let v = View {
        scale: TABLE_PX / width,
        depth,
    };
    let key = key_lines(units);
    let key_px = if key.is_empty() {
        0.0
    } else {
        12.0 + KEY_LINE * key.len() as f64
    };
    let (pw, ph) = (
        TABLE_PX + 2.0 * MARGIN,
        depth * v.scale + 2.0 * MARGIN + LEGEND + key_px,
    );
    let mut o = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">"#,
        w = num(pw),
        h = num(ph)
    );
    let _ = writeln!(o, "<title>{}</title>", esc(title));
    let _ = writeln!(
        o,
        r#"<rect width="{}" height="{}" fill="white"/>"#,
        num(pw),
        num(ph)
    );
    table(&mut o, &v, width, depth);
    // Terrain is drawn on the table only: a hill whose outline runs past
    // the table's edge is cut there.
    let clip = format!("{id}table-clip");
    let _ = writeln!(
        o,
        r#"<clipPath id="{clip}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath>"#,
        num(v.x(0.0)),
        num(v.y(depth)),
        num(width * v.scale),
        num(depth * v.scale)
    );
    let _ = writeln!(o, r#"<g clip-path="url(#{clip})">"#);
    for f in features.iter().filter(|f| !style(f.kind).line) {
        feature(&mut o, &v, f);
    }
    for f in features.iter().filter(|f| style(f.kind).line) {
        feature(&mut o, &v, f);
    }
    for f in features {
        let (lo, hi) = f.shape.bounds();
        let c = Pt::new(
            ((lo.x + hi.x) * 0.5).clamp(0.0, width),
            ((lo.y + hi.y) * 0.5).clamp(0.0, depth),
        );
        let _ = writeln!(
            o,
            r##"<text x="{}" y="{}" font-size="11" font-style="italic" fill="#222" text-anchor="middle" opacity="0.8">{}</text>"##,
            num(v.x(c.x)),
            num(v.y(c.y)),
            esc(f.label)
        );
    }
    let _ = writeln!(o, "</g>");
    // Units off the table beneath the live ones, which stay readable.
    for u in units.iter().filter(|u| u.faded) {
        unit(&mut o, &v, u);
    }
    for u in units.iter().filter(|u| !u.faded) {
        unit(&mut o, &v, u);
    }
    for a in arrows {
        arrow(&mut o, &v, a);
    }
    legend(&mut o, title, units);
    let top = v.y(0.0) + 30.0;
    for (i, line) in key.iter().enumerate() {
        let _ = writeln!(
            o,
            r##"<text class="key" x="{}" y="{}" font-size="11" fill="#333">{}</text>"##,
            num(MARGIN),
            num(top + KEY_LINE * i as f64),
            esc(line)
        );
    }
    o.push_str("</svg>\n");
    o
}

/// The key to the short names written on the bases ("P+S Pike+Shot"), in
/// the order the units come, and what the number after them is; wrapped to
/// the table's width.
fn key_lines(units: &[UnitMark]) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for u in units {
        let e = if u.kind.is_empty() || u.kind == u.short {
            u.short.to_string()
        } else {
            format!("{} {}", u.short, u.kind)
        };
        if !u.short.is_empty() && !entries.contains(&e) {
            entries.push(e);
        }
    }
    if units.iter().any(|u| u.resolve.is_some()) {
        entries.push("[N] resolve".into());
    }
    if entries.is_empty() {
        return Vec::new();
    }
    let most = (TABLE_PX / CHAR_PX) as usize;
    let mut lines = vec!["Key:".to_string()];
    for e in entries {
        let last = lines.last_mut().expect("one line at least");
        if last.chars().count() + 3 + e.chars().count() > most && last != "Key:" {
            lines.push(e);
        } else {
            last.push_str(if last == "Key:" { " " } else { " · " });
            last.push_str(&e);
        }
    }
    lines
}

/// The table, a grid every unit of measure, and tick labels every 6.
fn table(o: &mut String, v: &View, width: f64, depth: f64) {
    let _ = writeln!(
        o,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#eef2e2" stroke="#555" stroke-width="1.5"/>"##,
        num(v.x(0.0)),
        num(v.y(depth)),
        num(width * v.scale),
        num(depth * v.scale)
    );
    if width > 200.0 || depth > 200.0 {
        return;
    }
    let _ = writeln!(o, r##"<g stroke="#d5dbc4" stroke-width="0.6">"##);
    let mut x = 1.0;
    while x < width {
        let _ = writeln!(
            o,
            r#"<line x1="{0}" y1="{1}" x2="{0}" y2="{2}"/>"#,
            num(v.x(x)),
            num(v.y(0.0)),
            num(v.y(depth))
        );
        x += 1.0;
    }
    let mut y = 1.0;
    while y < depth {
        let _ = writeln!(
            o,
            r#"<line x1="{1}" y1="{0}" x2="{2}" y2="{0}"/>"#,
            num(v.y(y)),
            num(v.x(0.0)),
            num(v.x(width))
        );
        y += 1.0;
    }
    let _ = writeln!(o, "</g>");
    let _ = writeln!(o, r##"<g font-size="9" fill="#666">"##);
    let mut x = 0.0;
    while x <= width {
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            num(v.x(x)),
            num(v.y(0.0) + 12.0),
            num(x)
        );
        x += 6.0;
    }
    let mut y = 0.0;
    while y <= depth {
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            num(v.x(0.0) - 4.0),
            num(v.y(y) + 3.0),
            num(y)
        );
        y += 6.0;
    }
    let _ = writeln!(o, "</g>");
}

/// One piece of terrain.
fn feature(o: &mut String, v: &View, f: &Feature) {
    let st = style(f.kind);
    match f.shape {
        Shape::Rect {
            centre,
            width,
            depth,
            angle,
        } => {
            let corners = Base::new(*centre, *angle, *width, *depth).corners();
            let _ = writeln!(
                o,
                r#"<polygon class="terrain" points="{}" fill="{}" fill-opacity="0.85" stroke="{}" stroke-width="{}"/>"#,
                v.points(&corners),
                st.fill,
                st.stroke,
                num(st.outline)
            );
        }
        Shape::Ellipse {
            centre,
            rx,
            ry,
            angle,
        } => {
            let (cx, cy) = (num(v.x(centre.x)), num(v.y(centre.y)));
            let _ = writeln!(
                o,
                r#"<ellipse class="terrain" cx="{cx}" cy="{cy}" rx="{}" ry="{}" transform="rotate({} {cx} {cy})" fill="{}" fill-opacity="0.85" stroke="{}" stroke-width="{}"/>"#,
                num(rx * v.scale),
                num(ry * v.scale),
                num(*angle),
                st.fill,
                st.stroke,
                num(st.outline)
            );
        }
        Shape::Band { path, width } => {
            let (fill, stroke) = if st.line {
                ("none", st.stroke)
            } else {
                ("none", st.fill)
            };
            let _ = writeln!(
                o,
                r#"<polyline class="terrain" points="{}" fill="{}" stroke="{}" stroke-width="{}" stroke-linecap="round" stroke-linejoin="round" stroke-opacity="0.9"/>"#,
                v.points(path),
                fill,
                stroke,
                num((width * v.scale).max(3.0))
            );
        }
    }
}

/// One unit: its base rotated to its facing, its front edge drawn thick
/// with an arrowhead inside the base pointing ahead, and its short name and
/// resolve.
fn unit(o: &mut String, v: &View, u: &UnitMark) {
    let b = &u.base;
    let colour = SIDE_COLOURS[u.side % SIDE_COLOURS.len()];
    let (cx, cy) = (num(v.x(b.centre.x)), num(v.y(b.centre.y)));
    let (w, d) = (b.width * v.scale, b.depth * v.scale);
    let faded = if u.faded {
        r#" opacity="0.35" stroke-dasharray="4 3""#
    } else {
        ""
    };
    let _ = writeln!(
        o,
        r#"<g class="unit-mark" data-unit="{}"{}>"#,
        esc(u.label),
        if u.faded { r#" opacity="0.5""# } else { "" }
    );
    let _ = writeln!(o, "<title>{}</title>", esc(u.label));
    let _ = writeln!(
        o,
        r#"<rect class="unit" x="{}" y="{}" width="{}" height="{}" transform="rotate({} {cx} {cy})" fill="{colour}" fill-opacity="0.45" stroke="{colour}" stroke-width="1.5"{faded}/>"#,
        num(v.x(b.centre.x) - w * 0.5),
        num(v.y(b.centre.y) - d * 0.5),
        num(w),
        num(d),
        num(b.facing),
    );
    let [fl, fr, _, _] = b.corners();
    let _ = writeln!(
        o,
        r#"<line class="front" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="4" stroke-linecap="round"/>"#,
        num(v.x(fl.x)),
        num(v.y(fl.y)),
        num(v.x(fr.x)),
        num(v.y(fr.y)),
    );
    files(o, v, u, colour);
    let mid = (fl + fr) * 0.5;
    let back = mid - b.forward() * (b.depth * 0.4);
    let half = b.right() * (b.width * 0.12);
    let _ = writeln!(
        o,
        r#"<polygon class="arrow" points="{}" fill="{colour}"/>"#,
        v.points(&[mid, back + half, back - half]),
    );
    let text = match u.resolve {
        Some(r) => format!("{} [{r}]", u.tag),
        None => u.tag.to_string(),
    };
    let _ = writeln!(
        o,
        r#"<text x="{cx}" y="{}" font-size="11" font-weight="bold" fill="black" stroke="white" stroke-width="2.5" paint-order="stroke" text-anchor="middle">{}</text>"#,
        num(v.y(b.centre.y) + 4.0),
        esc(&text)
    );
    let _ = writeln!(o, "</g>");
}

/// A unit's files: a thin line between each two, and each file's bases
/// written just behind its front edge.
fn files(o: &mut String, v: &View, u: &UnitMark, colour: &str) {
    let n = u.files.len() as i64;
    if n == 0 {
        return;
    }
    for i in 1..=n {
        let [l, r, rear] = crate::run::field::files::file_corners(&u.base, n, i);
        if i > 1 {
            let _ = writeln!(
                o,
                r#"<line class="file" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="1"/>"#,
                num(v.x(l.x)),
                num(v.y(l.y)),
                num(v.x(rear.x)),
                num(v.y(rear.y)),
            );
        }
        let at = (l + r) * 0.5 - u.base.forward() * (u.base.depth * 0.25);
        let _ = writeln!(
            o,
            r#"<text class="file-bases" x="{}" y="{}" font-size="8" fill="black" text-anchor="middle">{}</text>"#,
            num(v.x(at.x)),
            num(v.y(at.y) + 3.0),
            u.files[(i - 1) as usize]
        );
    }
}

/// One move: a line from where the unit was to where it went, and a head.
fn arrow(o: &mut String, v: &View, a: &Arrow) {
    let colour = SIDE_COLOURS[a.side % SIDE_COLOURS.len()];
    let (from, to) = (
        Pt::new(v.x(a.from.x), v.y(a.from.y)),
        Pt::new(v.x(a.to.x), v.y(a.to.y)),
    );
    let d = to - from;
    let len = (d.x * d.x + d.y * d.y).sqrt();
    if len < 1.0 {
        return;
    }
    let (ux, uy) = (d.x / len, d.y / len);
    let head = 9.0_f64.min(len * 0.5);
    let back = Pt::new(to.x - ux * head, to.y - uy * head);
    let side = Pt::new(-uy * head * 0.45, ux * head * 0.45);
    let (class, dash, w) = if a.charge {
        ("charge", "", 3.0)
    } else {
        ("move", r#" stroke-dasharray="6 4""#, 1.8)
    };
    let _ = writeln!(
        o,
        r#"<g class="{class}"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="{}"{dash} stroke-linecap="round"/><polygon points="{},{} {},{} {},{}" fill="{colour}"/></g>"#,
        num(from.x),
        num(from.y),
        num(back.x),
        num(back.y),
        num(w),
        num(to.x),
        num(to.y),
        num(back.x + side.x),
        num(back.y + side.y),
        num(back.x - side.x),
        num(back.y - side.y),
    );
}

/// The title, and below it a swatch for each side present (on lines of
/// their own: a long title never runs into the sides).
fn legend(o: &mut String, title: &str, units: &[UnitMark]) {
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" font-size="16" font-weight="bold">{}</text>"#,
        num(MARGIN),
        num(MARGIN + 4.0),
        esc(title)
    );
    let mut sides: Vec<(usize, &str)> = units.iter().map(|u| (u.side, u.side_name)).collect();
    sides.sort_unstable();
    sides.dedup_by_key(|s| s.0);
    let mut x = MARGIN;
    for (s, name) in &sides {
        let shown = if name.is_empty() {
            format!("side {s}")
        } else {
            name.to_string()
        };
        let colour = SIDE_COLOURS[s % SIDE_COLOURS.len()];
        let _ = writeln!(
            o,
            r#"<rect x="{}" y="{}" width="14" height="10" fill="{colour}" fill-opacity="0.45" stroke="{colour}"/><text x="{}" y="{}" font-size="12">{}</text>"#,
            num(x),
            num(MARGIN + 15.0),
            num(x + 18.0),
            num(MARGIN + 24.0),
            esc(&shown),
        );
        x += 40.0 + 7.0 * shown.chars().count() as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(short: &'static str, x: f64, y: f64, facing: f64, side: usize) -> UnitMark<'static> {
        UnitMark {
            side_name: "",
            label: short,
            tag: short,
            short,
            kind: "",
            base: Base::new(Pt::new(x, y), facing, 2.0, 1.0),
            side,
            faded: false,
            resolve: Some(3),
            files: &[],
        }
    }

    /// The value of attribute `name` in the first element starting `start`.
    fn attr(svg: &str, start: &str, name: &str) -> f64 {
        let el = &svg[svg.find(start).unwrap()..];
        let el = &el[..el.find('>').unwrap()];
        let key = format!(" {name}=\"");
        let at = el.find(&key).unwrap() + key.len();
        el[at..at + el[at..].find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn well_formed_one_body_per_unit() {
        let units = [
            mark("P+S", 5.0, 5.0, 0.0, 0),
            mark("H", 9.0, 20.0, 180.0, 1),
        ];
        let s = render("t", 48.0, 32.0, &[], &units);
        assert!(s.starts_with("<svg"));
        assert!(s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches(r#"<rect class="unit""#).count(), 2);
        assert_eq!(s.matches(r#"<line class="front""#).count(), 2);
        assert_eq!(s.matches("<g").count(), s.matches("</g>").count());
        assert!(s.contains(">P+S [3]<"));
    }

    /// A unit facing 0 faces up the picture: its front edge is above (smaller
    /// SVG y than) its centre; facing 90 it is to the right.
    #[test]
    fn front_edge_marks_the_facing() {
        let s = render("t", 48.0, 32.0, &[], &[mark("A", 5.0, 5.0, 0.0, 0)]);
        let cy = attr(&s, r#"<rect class="unit""#, "y")
            + attr(&s, r#"<rect class="unit""#, "height") / 2.0;
        let y1 = attr(&s, r#"<line class="front""#, "y1");
        let y2 = attr(&s, r#"<line class="front""#, "y2");
        assert!(y1 < cy && y2 < cy, "{y1} {y2} {cy}");
        // y = 0 is at the bottom: a unit at y = 5 is below one at y = 20.
        let t = render("t", 48.0, 32.0, &[], &[mark("A", 5.0, 20.0, 0.0, 0)]);
        assert!(attr(&t, r#"<rect class="unit""#, "y") < attr(&s, r#"<rect class="unit""#, "y"));
        let r = render("t", 48.0, 32.0, &[], &[mark("A", 5.0, 5.0, 90.0, 0)]);
        let cx = attr(&r, r#"<rect class="unit""#, "x")
            + attr(&r, r#"<rect class="unit""#, "width") / 2.0;
        assert!(attr(&r, r#"<line class="front""#, "x1") > cx);
        assert!(r.contains("rotate(90 "));
    }

    #[test]
    fn text_is_escaped() {
        let mut u = mark("A&B", 5.0, 5.0, 0.0, 0);
        u.label = "<\"Tilly's\">";
        let s = render("Breitenfeld <1631> & \"after\"", 48.0, 32.0, &[], &[u]);
        assert!(s.contains("Breitenfeld &lt;1631&gt; &amp; &quot;after&quot;"));
        assert!(s.contains("A&amp;B [3]"));
        assert!(s.contains("&lt;&quot;Tilly&apos;s&quot;&gt;"));
        assert!(!s.contains("<1631>") && !s.contains("A&B"));
    }

    /// A picture with everything in it: a wood, a hill, a river, a road,
    /// and two units a side facing each other, one of them turned 45
    /// degrees, and a routed one.
    #[test]
    fn example_picture() {
        let wood = Shape::Rect {
            centre: Pt::new(10.0, 16.0),
            width: 6.0,
            depth: 4.0,
            angle: 30.0,
        };
        let hill = Shape::Ellipse {
            centre: Pt::new(34.0, 18.0),
            rx: 6.0,
            ry: 3.0,
            angle: 20.0,
        };
        let river = Shape::Band {
            path: vec![Pt::new(0.0, 26.0), Pt::new(20.0, 24.0), Pt::new(48.0, 29.0)],
            width: 1.0,
        };
        let road = Shape::Band {
            path: vec![Pt::new(24.0, 0.0), Pt::new(24.0, 32.0)],
            width: 0.6,
        };
        let features = [
            Feature {
                label: "Wood",
                kind: "woods",
                shape: &wood,
            },
            Feature {
                label: "Hill",
                kind: "difficult_hill",
                shape: &hill,
            },
            Feature {
                label: "River",
                kind: "river",
                shape: &river,
            },
            Feature {
                label: "Road",
                kind: "road",
                shape: &road,
            },
        ];
        let mut routed = mark("Sh", 40.0, 26.0, 180.0, 1);
        routed.faded = true;
        let units = [
            mark("P+S", 20.0, 8.0, 0.0, 0),
            mark("H", 28.0, 8.0, 45.0, 0),
            mark("P+S", 20.0, 14.0, 180.0, 1),
            mark("H", 30.0, 14.0, 180.0, 1),
            routed,
        ];
        let s = render(
            "Example: blue (bottom) faces red (top)",
            48.0,
            32.0,
            &features,
            &units,
        );
        assert_eq!(s.matches(r#"class="terrain""#).count(), 4);
    }

    /// A linear obstacle (a `line`: a band of no width) is drawn as a
    /// stroke 3 pixels wide, a hedge green, a wall dark.
    #[test]
    fn lines_are_drawn() {
        let line = Shape::Band {
            path: vec![Pt::new(0.0, 14.0), Pt::new(30.0, 14.0)],
            width: 0.0,
        };
        let features = [
            Feature {
                label: "Hedge",
                kind: "hedge",
                shape: &line,
            },
            Feature {
                label: "Wall",
                kind: "wall",
                shape: &line,
            },
        ];
        let s = render("t", 48.0, 32.0, &features, &[]);
        assert_eq!(
            s.matches(r##"stroke="#2f6b2a" stroke-width="3""##).count(),
            1,
            "{s}"
        );
        assert_eq!(
            s.matches(r##"stroke="#333333" stroke-width="3""##).count(),
            1,
            "{s}"
        );
    }

    /// The key names each short name once, in the order units come, and
    /// says what the number is; it wraps at the table's width.
    #[test]
    fn key_to_the_short_names() {
        let mut a = mark("P+S", 5.0, 5.0, 0.0, 0);
        a.kind = "Pike+Shot";
        let mut b = mark("LH", 9.0, 5.0, 0.0, 1);
        b.kind = "Light horse";
        let mut c = mark("P+S", 15.0, 5.0, 0.0, 1);
        c.kind = "Pike+Shot";
        let s = render("t", 48.0, 32.0, &[], &[a, b, c]);
        assert!(
            s.contains(">Key: P+S Pike+Shot · LH Light horse · [N] resolve<"),
            "{s}"
        );
        let many: Vec<UnitMark> = (0..40)
            .map(|i| {
                let mut u = mark("Xx", 1.0 + i as f64, 5.0, 0.0, 0);
                u.kind = Box::leak(format!("A unit type of a long name {i}").into_boxed_str());
                u
            })
            .collect();
        let lines = key_lines(&many);
        assert!(lines.len() > 4, "{lines:?}");
        assert!(lines
            .iter()
            .all(|l| l.chars().count() as f64 * CHAR_PX <= TABLE_PX));
        assert_eq!(
            lines
                .iter()
                .map(|l| l.matches("A unit type").count())
                .sum::<usize>(),
            40
        );
    }

    /// Routed units come first in the picture (beneath); terrain is cut to
    /// the table; the sides' line is below the title's.
    #[test]
    fn layers_clip_and_legend() {
        let mut routed = mark("R", 5.0, 5.0, 0.0, 1);
        routed.faded = true;
        routed.label = "routed one";
        let mut live = mark("L", 5.0, 5.0, 0.0, 0);
        live.label = "live one";
        let hill = Shape::Ellipse {
            centre: Pt::new(0.0, 16.0),
            rx: 6.0,
            ry: 3.0,
            angle: 0.0,
        };
        let f = [Feature {
            label: "Hill",
            kind: "hill",
            shape: &hill,
        }];
        let s = render_as("t3-", "a title", 48.0, 32.0, &f, &[live, routed], &[]);
        assert!(s.find("routed one").unwrap() < s.find("live one").unwrap());
        let clip = s.find(r#"<clipPath id="t3-table-clip">"#).unwrap();
        let group = s.find(r#"<g clip-path="url(#t3-table-clip)">"#).unwrap();
        assert!(clip < group && group < s.find(r#"class="terrain""#).unwrap());
        // The hill's label stays on the table.
        let label = &s[..s.find(">Hill<").unwrap()];
        let x: f64 = label[label.rfind("x=\"").unwrap() + 3..]
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(x >= MARGIN, "{x}");
        let title_y = attr(&s, r#"<text x="24" y="28" font-size="16""#, "y");
        let side_y = attr(&s, r#"<rect x="24" y="39""#, "y");
        assert!(side_y > title_y, "{title_y} {side_y}");
    }
}
