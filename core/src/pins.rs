//! Exact requirement pins as adapter manifests write them: `name==version`, optionally with
//! an environment marker for requirements that exist on some platforms only
//! (`basemap==1.3.8; sys_platform != "darwin"`).
//!
//! Only the markers that tell platforms apart are understood (`sys_platform`,
//! `platform_system`, `os_name`, compared with `==` or `!=`, joined by `and` or `or`), so
//! the installer, the doctor and the server can all decide, without Python, which pins
//! apply on this computer; a manifest with any other marker is refused when it loads.

/// One pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub name: String,
    pub version: String,
    /// The marker after `;`, as written.
    pub marker: Option<String>,
}

impl Pin {
    /// Parse `name==version[; marker]`; `None` when it is not an exact pin with an
    /// understood marker.
    pub fn parse(requirement: &str) -> Option<Pin> {
        let (spec, marker) = match requirement.split_once(';') {
            Some((s, m)) => (s.trim(), Some(m.trim().to_string())),
            None => (requirement.trim(), None),
        };
        let (name, version) = spec.split_once("==")?;
        let (name, version) = (name.trim(), version.trim());
        let name_ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        let version_ok = !version.is_empty()
            && version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!'));
        if !name_ok || !version_ok {
            return None;
        }
        if let Some(m) = &marker {
            evaluate(m, &Platform::this())?;
        }
        Some(Pin {
            name: name.to_string(),
            version: version.to_string(),
            marker,
        })
    }

    /// Does the pin apply on this computer?
    pub fn applies_here(&self) -> bool {
        self.applies_on(&Platform::this())
    }

    /// Does the pin apply on `platform`?
    pub fn applies_on(&self, platform: &Platform) -> bool {
        self.marker
            .as_deref()
            .is_none_or(|m| evaluate(m, platform).unwrap_or(true))
    }
}

/// The values platform markers compare against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// `linux`, `darwin`, `win32`.
    pub sys_platform: &'static str,
    /// `Linux`, `Darwin`, `Windows`.
    pub platform_system: &'static str,
    /// `posix`, `nt`.
    pub os_name: &'static str,
}

impl Platform {
    pub fn this() -> Platform {
        match std::env::consts::OS {
            "macos" => Platform {
                sys_platform: "darwin",
                platform_system: "Darwin",
                os_name: "posix",
            },
            "windows" => Platform {
                sys_platform: "win32",
                platform_system: "Windows",
                os_name: "nt",
            },
            _ => Platform {
                sys_platform: "linux",
                platform_system: "Linux",
                os_name: "posix",
            },
        }
    }
}

/// Evaluate `a == "x" and b != "y" or …` (`and` binds tighter); `None` when not understood.
fn evaluate(marker: &str, platform: &Platform) -> Option<bool> {
    let mut any = false;
    for alternative in marker.split(" or ") {
        let mut all = true;
        for clause in alternative.split(" and ") {
            all &= clause_holds(clause.trim(), platform)?;
        }
        any |= all;
    }
    Some(any)
}

fn clause_holds(clause: &str, platform: &Platform) -> Option<bool> {
    let (variable, equal, value) = if let Some((v, x)) = clause.split_once("!=") {
        (v, false, x)
    } else {
        let (v, x) = clause.split_once("==")?;
        (v, true, x)
    };
    let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
    let actual = match variable.trim() {
        "sys_platform" => platform.sys_platform,
        "platform_system" => platform.platform_system,
        "os_name" => platform.os_name,
        _ => return None,
    };
    Some((actual == value) == equal)
}

/// The pins of `requirements` that apply on this computer (unparsable entries skipped: the
/// manifest loader refuses them).
pub fn applicable(requirements: &[String]) -> Vec<Pin> {
    requirements
        .iter()
        .filter_map(|r| Pin::parse(r))
        .filter(Pin::applies_here)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_with_platform_markers() {
        let linux = Platform {
            sys_platform: "linux",
            platform_system: "Linux",
            os_name: "posix",
        };
        let mac = Platform {
            sys_platform: "darwin",
            platform_system: "Darwin",
            os_name: "posix",
        };
        let p = Pin::parse("basemap==1.3.8; sys_platform != \"darwin\"").unwrap();
        assert_eq!((p.name.as_str(), p.version.as_str()), ("basemap", "1.3.8"));
        assert!(p.applies_on(&linux) && !p.applies_on(&mac));
        let p = Pin::parse("gunicorn==20.1.0; platform_system != 'Windows' and os_name == 'posix'")
            .unwrap();
        assert!(p.applies_on(&linux));
        let p = Pin::parse("cartopy==0.22.0 ; sys_platform == \"darwin\" or os_name == \"nt\"")
            .unwrap();
        assert!(p.applies_on(&mac) && !p.applies_on(&linux));
        assert!(Pin::parse("numpy==1.23.5").unwrap().applies_on(&mac));
        for bad in [
            "numpy>=1",
            "x==1; python_version < '3.10'",
            "==1",
            "a==1; sys_platform ~= 'x'",
        ] {
            assert!(Pin::parse(bad).is_none(), "{bad}");
        }
    }
}
