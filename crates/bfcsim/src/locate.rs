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

/// A TOML parsing error of `file` (whose contents are `text`), at its line when the parser knows it.
pub fn toml_error(file: &Path, text: &str, e: &toml::de::Error) -> InputError {
    let message = e.message().trim().to_string();
    match e.span() {
        Some(span) => InputError::at(file, line_at(text, span.start), message),
        None => InputError::file(file, message),
    }
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
