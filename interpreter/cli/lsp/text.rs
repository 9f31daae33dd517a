//! Places in a text as the language server protocol names them: a line and
//! a character counted in UTF-16 code units (the protocol's default), and
//! back to the byte offsets [`crate::front::syntax::Span`]s hold. Every conversion
//! clamps: a position past a line's end or the text's end means its end,
//! never a panic (an editor may send a stale position).

use lsp_types::{Position, Range};

/// The starts of a text's lines, to turn byte offsets into positions.
pub struct Lines<'t> {
    text: &'t str,
    /// Byte offset of each line's first byte.
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    pub fn new(text: &'t str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { text, starts }
    }

    /// The position of byte `offset` (clamped to the text, and back to a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character = self.text[start..offset].encode_utf16().count();
        Position::new(line as u32, character as u32)
    }

    /// The range of bytes `start..end`.
    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end.max(start)))
    }

    /// The byte offset of `p` (a line past the end is the text's end; a
    /// character past the line's end is the line's end).
    pub fn offset(&self, p: Position) -> usize {
        let Some(&start) = self.starts.get(p.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(p.line as usize + 1)
            .map_or(self.text.len(), |&e| e.saturating_sub(1));
        let mut units = 0u32;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= p.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }
}

/// The name under byte `at`: a word of letters, digits and `_`, or the
/// inside of the quoted string the place is in (unit types such as
/// `"Pike+Shot"` are written quoted). With its byte range.
pub fn name_at(text: &str, at: usize) -> Option<(String, usize, usize)> {
    let at = at.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[line_start..line_end];
    let col = at - line_start;
    // Inside a string: between an opening quote before and its closing one after.
    let quotes: Vec<usize> = line.match_indices('"').map(|(i, _)| i).collect();
    for pair in quotes.chunks(2) {
        if let [open, close] = pair {
            if *open < col && col <= *close {
                let s = &line[open + 1..*close];
                return Some((s.to_string(), line_start + open + 1, line_start + close));
            }
        }
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let start = line[..col]
        .char_indices()
        .rev()
        .take_while(|(_, c)| word(*c))
        .last()
        .map_or(col, |(i, _)| i);
    let end = line[col..]
        .char_indices()
        .find(|(_, c)| !word(*c))
        .map_or(line.len(), |(i, _)| col + i);
    (start < end).then(|| {
        (
            line[start..end].to_string(),
            line_start + start,
            line_start + end,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_and_clamp() {
        let t = "ab\n§x\n";
        let l = Lines::new(t);
        // `§` is two bytes and one UTF-16 unit; inside it is before it.
        assert_eq!(l.position(5), Position::new(1, 1));
        assert_eq!(l.position(4), Position::new(1, 0));
        assert_eq!(l.offset(Position::new(1, 1)), 5);
        assert_eq!(l.offset(Position::new(9, 9)), t.len());
        assert_eq!(l.offset(Position::new(0, 99)), 2);
        assert_eq!(l.position(999), Position::new(2, 0));
    }

    #[test]
    fn names_are_words_or_quoted() {
        let t = "  foe is \"Pike+Shot\" and melee_to_hit(me)";
        assert_eq!(name_at(t, 12).unwrap().0, "Pike+Shot");
        assert_eq!(name_at(t, 30).unwrap().0, "melee_to_hit");
        assert_eq!(name_at(t, 0), None);
    }
}
