//! Where a problem found after parsing comes from: the line of the experiment file, or the `--set`, that gave
//! the offending key. The checks of every section start their messages with the dotted key they are about
//! (`switch.alpha = -1 must be positive`), so the key is read from the message and looked up in the file's
//! TOML and among the overrides.

use std::path::Path;

use bfcsim_core::InputError;
use toml::de::{DeTable, DeValue};

/// The dotted key a validation message starts with: `switch.alpha` in `switch.alpha = -1 must be positive`,
/// `name` in `name = "a/b" must be ...`.
pub fn key_of(message: &str) -> Option<&str> {
    let end = message
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(message.len());
    let key = &message[..end];
    let dotted = key.contains('.') && !key.starts_with('.') && !key.ends_with('.');
    (dotted || message[end..].starts_with(" = ")).then_some(key)
}

/// The 1-based line of `key` (dotted, list entries by index: `workload.group.0.load`) in TOML `text`, when
/// the text sets it.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let root = DeTable::parse(text).ok()?;
    let mut table = root.get_ref();
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        let (k, v) = table.iter().find(|(k, _)| k.get_ref().as_ref() == part)?;
        let mut value = v.get_ref();
        if let (DeValue::Array(items), Some(index)) = (value, parts.peek()) {
            let item = items.get(index.parse::<usize>().ok()?)?;
            parts.next();
            if parts.peek().is_none() {
                return Some(line_at(text, item.span().start));
            }
            value = item.get_ref();
        }
        match (value, parts.peek()) {
            (_, None) => return Some(line_at(text, k.span().start)),
            (DeValue::Table(t), Some(_)) => table = t,
            _ => return None,
        }
    }
    None
}

/// The 1-based line of byte `offset`.
pub fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A TOML parsing error of `file` (whose contents are `text`), at its line when the parser knows it. An
/// unknown key is put at its own line (the parser points at its table's header) and, where the parser lists
/// no valid keys (a table that flattens another), with the keys its section has.
pub fn toml_error(file: &Path, text: &str, e: &toml::de::Error) -> InputError {
    let mut message = e.message().trim().to_string();
    let Some(span) = e.span() else {
        return InputError::file(file, message);
    };
    let mut line = line_at(text, span.start);
    if let Some(field) = unknown_field(&message) {
        let section = section_at(text, line);
        if let Some(at) = key_line_in_section(text, line, field) {
            line = at;
        }
        if !message.contains("expected")
            && let Some(keys) = section.and_then(|s| section_keys(&s))
        {
            message = format!("{message}, expected one of {}", keys.join(", "));
        }
    }
    InputError::at(file, line, message)
}

/// `X` of a message "unknown field `X`...".
fn unknown_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split_once('`').map(|(field, _)| field)
}

/// The dotted name of the `[table]` whose header is at or above 1-based `line` of `text` (`None` at the top).
fn section_at(text: &str, line: usize) -> Option<String> {
    let above: Vec<&str> = text.lines().take(line).collect();
    above.into_iter().rev().find_map(|l| {
        let l = l.trim();
        let name = l.strip_prefix('[')?.trim_start_matches('[');
        let name = name.split(']').next()?.trim();
        (!name.is_empty()).then(|| name.to_string())
    })
}

/// The line below header `line` (within its table) that sets `field`.
fn key_line_in_section(text: &str, line: usize, field: &str) -> Option<usize> {
    text.lines()
        .enumerate()
        .skip(line.saturating_sub(1))
        .take_while(|(i, l)| *i + 1 == line || !l.trim_start().starts_with('['))
        .find(|(_, l)| {
            l.trim_start()
                .strip_prefix(field)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|(i, _)| i + 1)
}

/// The keys of section `dotted` (`nic`, `switch.ecn`) in the default experiment, when it is a table there.
fn section_keys(dotted: &str) -> Option<Vec<String>> {
    let config = crate::experiment::replay_config("dctcp", &[]).ok()?;
    let mut value = toml::Value::try_from(&config).ok()?;
    for part in dotted.split('.') {
        value = value.as_table()?.get(part)?.clone();
    }
    let mut keys: Vec<String> = value.as_table()?.keys().map(|k| format!("`{k}`")).collect();
    keys.sort();
    Some(keys)
}

/// `message` as an error of `file`: at the line that sets its key, or naming the `--set` that does (the last
/// one, which wins), or the file alone when the key came from a default or a preset.
pub fn blame(file: &Path, text: &str, overrides: &[String], message: String) -> InputError {
    let Some(key) = key_of(&message) else {
        return InputError::file(file, message);
    };
    let set = overrides.iter().rev().find(|o| {
        let k = o.split_once('=').map_or(o.as_str(), |(k, _)| k).trim();
        k == key || key.starts_with(&format!("{k}.")) || k.starts_with(&format!("{key}."))
    });
    match (set, line_of_key(text, key)) {
        (Some(o), _) => InputError::file(file, format!("--set {o}: {message}")),
        (None, Some(line)) => InputError::at(file, line, message),
        (None, None) => InputError::file(file, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_key_is_put_at_its_line_with_the_keys_of_its_section() {
        // Issue 72: it pointed at `[nic]` and listed nothing.
        let text = "name = \"x\"\n[nic]\npayload = 1000\nbogus = 1\n[switch]\n";
        let e = toml::from_str::<crate::experiment::ExperimentConfig>(text).unwrap_err();
        let e = toml_error(Path::new("x.toml"), text, &e);
        assert_eq!(e.line, Some(4), "{e}");
        assert!(
            e.message
                .starts_with("unknown field `bogus`, expected one of "),
            "{e}"
        );
        assert!(
            e.message.contains("`payload`") && e.message.contains("`rto_min`"),
            "{e}"
        );
    }

    #[test]
    fn keys_are_read_from_messages() {
        assert_eq!(
            key_of("switch.alpha = -1 must be positive"),
            Some("switch.alpha")
        );
        assert_eq!(
            key_of("switch.buffer is 0: set a size"),
            Some("switch.buffer")
        );
        assert_eq!(key_of("name = \"a/b\" must be plain"), Some("name"));
        assert_eq!(key_of("give a [workload] or a [flows] file"), None);
        assert_eq!(key_of("topology: tors must be at least 1"), None);
    }

    #[test]
    fn keys_are_found_in_the_text() {
        let text = "name = \"x\"\n[switch]\nbuffer = \"1MB\"\nalpha = -1\n[[workload.group]]\nname = \"a\"\n\
                    [[workload.group]]\nname = \"b\"\nload = -3\n";
        assert_eq!(line_of_key(text, "switch.alpha"), Some(4));
        assert_eq!(line_of_key(text, "name"), Some(1));
        assert_eq!(line_of_key(text, "workload.group.1.load"), Some(9));
        assert_eq!(line_of_key(text, "switch.queues_per_port"), None);
        assert_eq!(line_of_key(text, "workload.group.7.load"), None);
    }

    #[test]
    fn a_key_set_on_the_command_line_is_blamed_on_the_set() {
        let file = Path::new("e.toml");
        let text = "[switch]\nalpha = 2\n";
        let m = "switch.alpha = -1 must be positive".to_string();
        let e = blame(file, text, &["switch.alpha=-1".into()], m.clone());
        assert_eq!(
            e.to_string(),
            "e.toml: --set switch.alpha=-1: switch.alpha = -1 must be positive"
        );
        assert_eq!(blame(file, text, &[], m).line, Some(2));
    }
}
