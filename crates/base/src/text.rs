//! Text shown to users: tokens quoted from hostile input are cut to a readable length.

/// Cuts a token quoted in an error message to `max` characters, with "…" and its full length,
/// so a 300 KB malformed number does not fill the terminal.
pub fn cut_token(token: &str, max: usize) -> String {
    match token.char_indices().nth(max) {
        None => token.to_string(),
        Some((at, _)) => format!("{}… ({} bytes)", &token[..at], token.len()),
    }
}
