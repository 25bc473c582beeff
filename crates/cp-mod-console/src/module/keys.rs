//! Escape sequences in `console_send_keys` input, turned into the bytes a terminal sends.

/// A `\x` escape without two hex digits after it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`\\x{digits}` at position {position} is not a valid byte escape; use two hex digits, \
     e.g. `\\x03` for Ctrl-C"
)]
pub struct BadKeyEscape {
    /// What followed `\x` (at most two characters).
    pub digits: String,
    /// Byte position of the backslash in the input.
    pub position: usize,
}

/// Decodes `input`: `\n` (newline), `\r` (carriage return, what Enter sends), `\t`, `\e`
/// (escape, so `\e[A` is arrow-up), `\xHH` (any byte, `\x03` is Ctrl-C), `\\` (a backslash).
/// Any other backslash is sent as typed, so `grep '\d'` arrives intact.
pub fn decode_keys(input: &str) -> Result<Vec<u8>, BadKeyEscape> {
    let mut out = Vec::with_capacity(input.len());
    let mut chars = input.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.peek().map(|&(_, n)| n) {
            Some('n') => out.push(b'\n'),
            Some('r') => out.push(b'\r'),
            Some('t') => out.push(b'\t'),
            Some('e') => out.push(0x1b),
            Some('\\') => out.push(b'\\'),
            Some('x') => {
                chars.next();
                let hex: String = (0..2)
                    .filter_map(|_| chars.next().map(|(_, h)| h))
                    .collect();
                let byte = u8::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 2);
                let Some(byte) = byte else {
                    return Err(BadKeyEscape {
                        digits: hex,
                        position: at,
                    });
                };
                out.push(byte);
                continue;
            }
            _ => {
                out.push(b'\\');
                continue;
            }
        }
        chars.next();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_documented_escapes() {
        assert_eq!(decode_keys("ls -l\\n").unwrap(), b"ls -l\n");
        assert_eq!(decode_keys("\\x03").unwrap(), [3]);
        assert_eq!(decode_keys("\\e[A\\r").unwrap(), b"\x1b[A\r");
        assert_eq!(decode_keys("a\\tb\\\\n").unwrap(), b"a\tb\\n");
        assert_eq!(decode_keys("é").unwrap(), "é".as_bytes());
    }

    #[test]
    fn other_backslashes_pass_through() {
        assert_eq!(decode_keys("grep '\\d+'\\n").unwrap(), b"grep '\\d+'\n");
        assert_eq!(decode_keys("end\\").unwrap(), b"end\\");
    }

    #[test]
    fn bad_hex_is_an_error() {
        let err = decode_keys("\\xZZ").unwrap_err().to_string();
        assert!(err.contains("\\x03"), "{err}");
        assert!(err.starts_with("`\\xZZ` at position 0"), "{err}");
        assert!(decode_keys("\\x4").is_err());
    }
}
