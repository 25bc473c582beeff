//! The `"hosts"` section of `config.json`: the machines a run may send work to, each an ssh
//! destination (anything `ssh` accepts, a `~/.ssh/config` alias included) with its number of
//! slots, e.g. `{"hosts": [{"ssh": "build-1", "slots": 2}, {"name": "big", "ssh":
//! "me@10.0.0.7"}]}`. Read strictly: an unknown key, a destination `ssh` would take for an
//! option, or two hosts of one name, is an error naming the host and what to write instead.

use cp_base::Project;
use serde::{Deserialize, Serialize};

use crate::RemoteError;

/// The key of the section in `config.json`.
pub const HOSTS_CONFIG_KEY: &str = "hosts";

/// One host of the `hosts` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Its name in the run's lines, proofs and `context.json`; the destination when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The ssh destination: `host`, `user@host`, `ssh://user@host:port` or an alias of the
    /// person's ssh configuration.
    pub ssh: String,
    /// How many jobs it takes at once (1 when unset).
    #[serde(default = "one")]
    pub slots: usize,
    /// How long, in seconds, the run waits for the host to answer again after the link
    /// dropped during one of its jobs, before it leaves the host out and does the job on its
    /// own machine ([`DEFAULT_RECONNECT_SECS`] when unset; 0: never waits).
    #[serde(default = "default_reconnect")]
    pub reconnect_secs: u64,
}

/// The wait for a host whose link dropped, when `reconnect_secs` is unset: long enough for
/// a laptop's Wi-Fi to come back, short next to a test suite.
pub const DEFAULT_RECONNECT_SECS: u64 = 30;

/// The longest `reconnect_secs` taken.
const MAX_RECONNECT_SECS: u64 = 3600;

fn one() -> usize {
    1
}

fn default_reconnect() -> u64 {
    DEFAULT_RECONNECT_SECS
}

impl HostConfig {
    /// Its name: `name`, else the destination.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.ssh)
    }
}

/// Reads and checks the project's `hosts` (none when the section is absent).
pub fn load_hosts(project: &Project) -> Result<Vec<HostConfig>, RemoteError> {
    let hosts: Vec<HostConfig> = project.config().section(HOSTS_CONFIG_KEY)?;
    check_hosts(&hosts)?;
    Ok(hosts)
}

/// Checks what serde cannot: destinations, slots and unique names.
pub fn check_hosts(hosts: &[HostConfig]) -> Result<(), RemoteError> {
    let invalid = |host: &HostConfig, message: String| RemoteError::InvalidHost {
        host: host.name().to_owned(),
        message,
    };
    for (i, host) in hosts.iter().enumerate() {
        let ssh = host.ssh.as_str();
        if ssh.trim().is_empty() {
            return Err(invalid(
                host,
                "'ssh' is empty; example: \"build-1\" or \"me@10.0.0.7\"".into(),
            ));
        }
        if ssh.starts_with('-') {
            return Err(invalid(
                host,
                format!(
                    "'ssh' `{ssh}` starts with '-', which ssh reads as an option; write the destination only"
                ),
            ));
        }
        if ssh.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid(
                host,
                format!(
                    "'ssh' `{ssh}` holds a space or a control character; options belong in ~/.ssh/config, under a `Host` alias"
                ),
            ));
        }
        if let Some(name) = &host.name
            && !is_host_name(name)
        {
            return Err(invalid(
                host,
                "'name' may hold letters, digits, '.', '_', '-' and '@' only; example: \"build-1\""
                    .into(),
            ));
        }
        if host.slots == 0 {
            return Err(invalid(
                host,
                "'slots' is 0; a host takes at least 1 job (leave it out for 1)".into(),
            ));
        }
        if host.reconnect_secs > MAX_RECONNECT_SECS {
            return Err(invalid(
                host,
                format!(
                    "'reconnect_secs' is {}; at most {MAX_RECONNECT_SECS} (an hour)",
                    host.reconnect_secs
                ),
            ));
        }
        if hosts[..i].iter().any(|h| h.name() == host.name()) {
            return Err(invalid(
                host,
                "two hosts have this name; give one a 'name' of its own".into(),
            ));
        }
    }
    Ok(())
}

fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-@:".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Vec<HostConfig>, String> {
        let hosts: Vec<HostConfig> = serde_json::from_str(json).map_err(|e| e.to_string())?;
        check_hosts(&hosts).map_err(|e| e.to_string())?;
        Ok(hosts)
    }

    #[test]
    fn hosts_read_with_one_slot_by_default_and_their_destination_as_name() {
        let hosts =
            parse(r#"[{"ssh": "build-1"}, {"name": "big", "ssh": "ssh://me@h:2222", "slots": 4}]"#)
                .unwrap();
        assert_eq!(hosts[0].name(), "build-1");
        assert_eq!(hosts[0].slots, 1);
        assert_eq!(hosts[1].name(), "big");
        assert_eq!(hosts[1].slots, 4);
        assert_eq!(hosts[0].reconnect_secs, DEFAULT_RECONNECT_SECS);
        let waits = parse(r#"[{"ssh": "a", "reconnect_secs": 0}]"#).unwrap();
        assert_eq!(waits[0].reconnect_secs, 0);
    }

    #[test]
    fn a_bad_host_is_named_with_what_to_write_instead() {
        for (json, expected) in [
            (r#"[{"ssh": "a", "slot": 2}]"#, "unknown field `slot`"),
            (r#"[{"name": "a"}]"#, "missing field `ssh`"),
            (r#"[{"ssh": ""}]"#, "'ssh' is empty"),
            (r#"[{"ssh": "-oProxyCommand=x"}]"#, "starts with '-'"),
            (r#"[{"ssh": "a -p 22"}]"#, "~/.ssh/config"),
            (r#"[{"ssh": "a", "slots": 0}]"#, "'slots' is 0"),
            (
                r#"[{"ssh": "a", "reconnect_secs": 86400}]"#,
                "'reconnect_secs' is 86400; at most 3600",
            ),
            (
                r#"[{"ssh": "a"}, {"ssh": "a"}]"#,
                "two hosts have this name",
            ),
            (r#"[{"ssh": "a", "name": "x y"}]"#, "'name' may hold"),
            (r#"{"ssh": "a"}"#, "invalid type"),
        ] {
            let err = parse(json).unwrap_err();
            assert!(err.contains(expected), "{json}: {err}");
        }
    }
}
