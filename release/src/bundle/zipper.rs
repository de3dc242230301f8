//! Byte-for-byte reproducible zips: entries sorted by path, one fixed timestamp, normalized
//! modes (0755 for binaries, 0644 for everything else), one compression method and level, and
//! no extra fields. The same entries and epoch always give the same bytes.

use std::io::Write;

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

/// One file of a bundle.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: String,
    pub bytes: Vec<u8>,
    pub executable: bool,
}

/// The zip timestamp for `epoch` (seconds since 1970, UTC), clamped to zip's 1980–2107 range.
pub fn zip_time(epoch: i64) -> DateTime {
    let clamped = epoch.clamp(315_532_800, 4_354_819_199);
    let ts = jiff::Timestamp::from_second(clamped).expect("clamped epoch is a valid timestamp");
    let dt = ts.to_zoned(jiff::tz::TimeZone::UTC).datetime();
    // Zip stores even seconds only; the clamp keeps every field in range.
    DateTime::from_date_and_time(
        dt.year() as u16,
        dt.month() as u8,
        dt.day() as u8,
        dt.hour() as u8,
        dt.minute() as u8,
        (dt.second() as u8) & !1,
    )
    .expect("date in zip range")
}

/// Write `entries` (in path order) as a zip.
pub fn write_zip(entries: &mut [Entry], epoch: i64) -> zip::result::ZipResult<Vec<u8>> {
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let time = zip_time(epoch);
    let mut writer = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for e in entries.iter() {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .compression_level(Some(9))
            .last_modified_time(time)
            .unix_permissions(if e.executable { 0o755 } else { 0o644 });
        writer.start_file(e.path.as_str(), options)?;
        writer.write_all(&e.bytes)?;
    }
    Ok(writer.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_entries_in_any_order_give_the_same_bytes() {
        let mk = |p: &str| Entry { path: p.into(), bytes: p.repeat(50).into_bytes(), executable: p.starts_with("bin/") };
        let mut a = vec![mk("b.txt"), mk("bin/x"), mk("a.txt")];
        let mut b = vec![mk("a.txt"), mk("b.txt"), mk("bin/x")];
        let za = write_zip(&mut a, 1_700_000_000).unwrap();
        let zb = write_zip(&mut b, 1_700_000_000).unwrap();
        assert_eq!(za, zb);
        let zc = write_zip(&mut b, 1_700_000_002).unwrap();
        assert_ne!(za, zc, "the epoch is part of the bytes");
    }
}
