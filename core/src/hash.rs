//! SHA-256 of bytes, files (streamed, never fully in memory) and canonical JSON.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Lower-case hex SHA-256 and byte length of everything `reader` yields.
pub fn sha256_reader(reader: impl Read) -> std::io::Result<(String, u64)> {
    HashingReader::new(reader).finish()
}

/// A reader that hashes every byte that passes through it: for hashing a file while it is
/// parsed or copied, without reading it twice.
#[derive(Debug)]
pub struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    total: u64,
}

impl<R: Read> HashingReader<R> {
    pub fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: Sha256::new(),
            total: 0,
        }
    }

    /// Lower-case hex SHA-256 and length of everything `inner` yields: what the caller did
    /// not read yet is read now, so the hash always covers the whole input.
    pub fn finish(mut self) -> std::io::Result<(String, u64)> {
        std::io::copy(&mut self, &mut std::io::sink())?;
        Ok((hex::encode(self.hasher.finalize()), self.total))
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.total += n as u64;
        Ok(n)
    }
}

/// Lower-case hex SHA-256 and size of the file at `path`, streamed in 64 KiB blocks.
pub fn sha256_file(path: &Path) -> std::io::Result<(String, u64)> {
    sha256_reader(fs_err::File::open(path)?)
}

/// Canonical JSON text of `value`: object keys sorted at every depth, no insignificant
/// whitespace. Two equal values always give the same text, whatever order their maps
/// were built in.
pub fn canonical_json(value: &serde_json::Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    String::from_utf8(out).expect("JSON text is UTF-8")
}

// Keys and scalars are written by serde_json straight into the buffer: the whole manifest
// and its schemas go through here at every server start, and a string per key and scalar
// was most of that start's time.
fn write_canonical(value: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            // serde_json's map is already ordered by key, unless some crate in the build
            // turns on its `preserve_order` feature: sort whatever it gave.
            if !keys.is_sorted() {
                keys.sort();
            }
            out.push(b'{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("a string serializes");
                out.push(b':');
                write_canonical(&map[key.as_str()], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => serde_json::to_writer(&mut *out, scalar).expect("a scalar serializes"),
    }
}

/// SHA-256 of the canonical JSON text of `value`.
pub fn canonical_sha256(value: &serde_json::Value) -> String {
    sha256_hex(canonical_json(value).as_bytes())
}

/// SHA-256 of the canonical JSON of any serializable value.
pub fn canonical_sha256_of<T: serde::Serialize>(value: &T) -> String {
    let value = serde_json::to_value(value).expect("serializable to JSON");
    canonical_sha256(&value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a = json!({"b": 1, "a": {"d": [3, {"z": 1, "y": 2}], "c": "x"}});
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}"#
        );
    }

    /// The text (and so every adapter hash and validation id already recorded) is what the
    /// first implementation wrote: keys and scalars through `Value`'s `Display`.
    #[test]
    fn canonical_json_is_unchanged_from_the_display_based_writer() {
        fn reference(value: &serde_json::Value, out: &mut String) {
            use serde_json::Value;
            match value {
                Value::Object(map) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    out.push('{');
                    for (i, key) in keys.into_iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&Value::String(key.clone()).to_string());
                        out.push(':');
                        reference(&map[key.as_str()], out);
                    }
                    out.push('}');
                }
                Value::Array(items) => {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        reference(item, out);
                    }
                    out.push(']');
                }
                scalar => out.push_str(&scalar.to_string()),
            }
        }
        let tricky = json!({
            "é\"\\\n\u{1}": ["tab\t", "日本", "\u{7f}", "</script>", "\u{2028}"],
            "numbers": [0, -1, 1.5, 1e300, -0.0, 12345678901234567890u64, 0.1],
            "z": {"nested": {"b": null, "a": true, "c": false}},
            "": ""
        });
        let mut expected = String::new();
        reference(&tricky, &mut expected);
        assert_eq!(canonical_json(&tricky), expected);
        for adapter in crate::manifest::EMBEDDED_ADAPTERS {
            let loaded = crate::manifest::resolve(adapter.name).unwrap();
            let value = serde_json::to_value(&loaded.manifest).unwrap();
            let mut expected = String::new();
            reference(&value, &mut expected);
            assert_eq!(loaded.canonical_json(), expected, "{}", adapter.name);
        }
    }

    #[test]
    fn file_hash_matches_bytes_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.bin");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        fs_err::write(&path, &bytes).unwrap();
        let (hash, size) = sha256_file(&path).unwrap();
        assert_eq!(size, bytes.len() as u64);
        assert_eq!(hash, sha256_hex(&bytes));
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
