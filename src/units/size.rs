//! Sizes given as text: `512M`, `4G`, a number of bytes, or `none`.

/// A text that is not a size.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SizeError {
    /// A unit that is none of K, M, G, T.
    #[error("unknown unit `{unit}` in {text:?} (use K, M, G or T)")]
    Unit {
        /// The unit given.
        unit: String,
        /// The whole text.
        text: String,
    },
    /// Not a number.
    #[error("{0:?} is not a size such as 512M or 4G")]
    NotANumber(String),
    /// Zero, negative or not finite.
    #[error("{0:?} is not a positive size")]
    NotPositive(String),
}

/// A size: `512M`, `4G`, `4GiB`, `1.5g`, a number of bytes, or `none`.
pub(crate) fn parse_size(text: &str) -> Result<Option<u64>, SizeError> {
    let t = text.trim().to_ascii_lowercase();
    if t == "none" {
        return Ok(None);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let factor: u64 = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(SizeError::Unit {
                unit: other.to_string(),
                text: text.to_string(),
            });
        }
    };
    let n: f64 = number
        .parse()
        .map_err(|_| SizeError::NotANumber(text.to_string()))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(SizeError::NotPositive(text.to_string()));
    }
    Ok(Some((n * factor as f64) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512M").unwrap(), Some(512 << 20));
        assert_eq!(parse_size("4GiB").unwrap(), Some(4 << 30));
        assert_eq!(parse_size("1.5g").unwrap(), Some(3 << 29));
        assert_eq!(parse_size("none").unwrap(), None);
        assert!(
            parse_size("4 parsecs")
                .unwrap_err()
                .to_string()
                .contains("unknown unit")
        );
    }
}

/// A byte count in words: `512 B`, `4.0 KiB`, `12.3 MiB`, `1.2 GiB`.
pub(crate) fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod format_tests {
    #[test]
    fn sizes_are_said_in_binary_units() {
        assert_eq!(super::format_size(512), "512 B");
        assert_eq!(super::format_size(4096), "4.0 KiB");
        assert_eq!(super::format_size(13 << 20), "13.0 MiB");
        assert_eq!(super::format_size(5 << 30), "5.0 GiB");
    }
}
