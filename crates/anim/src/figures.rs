//! How a small figure meant for people is written (a precision floor, the threshold to raise it
//! to): one function for the CLI's lines, the report's summary, the compressor's refusal and the
//! app, so the same floor never reads "0.001070" in one place and "0.00107" in another.

/// Decimals that show a small positive figure to three significant digits.
fn three_digit_decimals(x: f64) -> usize {
    (2 - x.log10().floor() as i32).max(0) as usize
}

/// A small positive figure to three significant digits, in plain notation ("0.00107").
pub fn three_digits(x: f64) -> String {
    if !(x.is_finite() && x > 0.0) {
        return format!("{x}");
    }
    let decimals = three_digit_decimals(x);
    format!("{x:.decimals$}")
}

/// [`three_digits`] rounded up (a figure to reach, never one just under it).
pub fn three_digits_up(x: f64) -> String {
    if !(x.is_finite() && x > 0.0) {
        return format!("{x}");
    }
    let decimals = three_digit_decimals(x);
    let scale = 10f64.powi(decimals as i32);
    format!("{:.decimals$}", (x * scale).ceil() / scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_digits_in_plain_notation() {
        assert_eq!(three_digits(0.0010702), "0.00107");
        assert_eq!(three_digits(0.0213), "0.0213");
        assert_eq!(three_digits(1.5), "1.50");
        assert_eq!(three_digits_up(0.0011012), "0.00111");
        // Rounded up, never to a figure just under the one to reach.
        assert_eq!(three_digits_up(0.0011f32 as f64), "0.00110");
        assert_eq!(three_digits(0.0), "0");
    }
}
