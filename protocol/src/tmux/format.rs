//! tmux's formats (`-F`, `display-message`): `#{name}` expands to a variable of
//! the target, `#{?name,then,else}` picks by its truth (set, and not `0`), `##`
//! is a `#`, and the short forms `#S #I #P #W #D #T #H #F` name the usual
//! variables. A variable fugue does not know expands to nothing, as in tmux;
//! so does a modifier fugue does not take (`#{=5:name}`).
//!
//! No recursion: a conditional's branches expand variables but no further
//! conditionals. The output is bounded by [`MAX_EXPANDED`].

/// Bytes one expansion may produce at most; the rest is cut.
pub const MAX_EXPANDED: usize = 64 * 1024;

fn short_form(c: char) -> Option<&'static str> {
    Some(match c {
        'S' => "session_name",
        'I' => "window_index",
        'P' => "pane_index",
        'W' => "window_name",
        'D' => "pane_id",
        'T' => "pane_title",
        'H' => "host",
        'h' => "host_short",
        'F' => "window_flags",
        _ => return None,
    })
}

/// Expands `format`, reading variables through `lookup`.
pub fn expand(format: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    expand_at(format, lookup, true)
}

fn truthy(value: Option<String>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// The text of `#{...}` starting after `#{` in `rest`: up to the matching `}`
/// (braces nest), and the length taken with it.
fn braced(rest: &str) -> Option<(&str, usize)> {
    let mut depth = 1usize;
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&rest[..i], i + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits a conditional's body at its top-level commas (not inside `#{}`).
fn top_level_commas(body: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
}

fn expand_at(format: &str, lookup: &dyn Fn(&str) -> Option<String>, conditionals: bool) -> String {
    let mut out = String::new();
    let mut rest = format;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        let mut chars = rest.chars();
        match chars.next() {
            Some('#') => {
                out.push('#');
                rest = &rest[1..];
            }
            Some('{') => match braced(&rest[1..]) {
                Some((body, taken)) => {
                    rest = &rest[1 + taken..];
                    out.push_str(&expand_body(body, lookup, conditionals));
                }
                None => {
                    // An unclosed `#{`: tmux prints nothing for it.
                    rest = "";
                }
            },
            Some(c) => match short_form(c) {
                Some(name) => {
                    out.push_str(&lookup(name).unwrap_or_default());
                    rest = &rest[c.len_utf8()..];
                }
                None => out.push('#'),
            },
            None => out.push('#'),
        }
        if out.len() > MAX_EXPANDED {
            break;
        }
    }
    out.push_str(rest);
    if out.len() > MAX_EXPANDED {
        let mut cut = MAX_EXPANDED;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

fn expand_body(body: &str, lookup: &dyn Fn(&str) -> Option<String>, conditionals: bool) -> String {
    if let Some(condition) = body.strip_prefix('?') {
        if !conditionals {
            return String::new();
        }
        let parts = top_level_commas(condition);
        let (test, then, otherwise) = match parts.as_slice() {
            [test, then, otherwise, ..] => (*test, *then, *otherwise),
            [test, then] => (*test, *then, ""),
            _ => return String::new(),
        };
        let holds = match test.strip_prefix("#{").and_then(|t| t.strip_suffix('}')) {
            Some(name) => truthy(lookup(name)),
            None => truthy(lookup(test)),
        };
        return expand_at(if holds { then } else { otherwise }, lookup, false);
    }
    if body.contains(':') || body.contains('#') {
        // A modifier or a comparison fugue's tmux does not take.
        return String::new();
    }
    lookup(body).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "pane_id" => Some("%3".into()),
            "session_name" => Some("work".into()),
            "window_id" => Some("@1".into()),
            "pane_active" => Some("1".into()),
            "pane_dead" => Some("0".into()),
            _ => None,
        }
    }

    #[test]
    fn variables_expand_and_unknown_ones_are_empty() {
        assert_eq!(expand("#{session_name}:#{window_id}.#{pane_id}", &vars), "work:@1.%3");
        assert_eq!(expand("#{nope}|#{pane_id}|", &vars), "|%3|");
        assert_eq!(expand("#S ## #D #Z", &vars), "work # %3 #Z");
        assert_eq!(expand("#{=5:pane_id}", &vars), "");
        assert_eq!(expand("open #{pane_id", &vars), "open ");
    }

    #[test]
    fn conditionals_pick_by_truth() {
        assert_eq!(expand("#{?pane_active,A,-}", &vars), "A");
        assert_eq!(expand("#{?pane_dead,dead,alive #{pane_id}}", &vars), "alive %3");
        assert_eq!(expand("#{?nope,x}", &vars), "");
        // No nesting: a conditional inside a branch is empty, not expanded.
        assert_eq!(expand("#{?pane_active,#{?pane_active,deep,},}", &vars), "");
    }

    #[test]
    fn output_is_bounded() {
        let huge = "#{pane_id}".repeat(MAX_EXPANDED);
        assert!(expand(&huge, &vars).len() <= MAX_EXPANDED);
    }
}
