//! The list of congestion controllers with their parameters and defaults, printed by `bfcsim schemes`. Parameters and their
//! defaults come from serializing each scheme's default configuration, so the list cannot drift from the code.

use serde::Serialize;

use crate::cc::CcConfig;

/// One scheme: its name, what it is, and its parameters with default values.
#[derive(Clone, Debug, Serialize)]
pub struct SchemeInfo {
    /// Name used in `[scheme] name = ...` and `--scheme`.
    pub name: &'static str,
    /// One line on what it is and where it comes from.
    pub summary: &'static str,
    /// `(parameter, default)` pairs, as TOML values.
    pub params: Vec<(String, String)>,
}

/// A configuration's parameters with their values as TOML, in declaration order; the optional ones left unset
/// (which TOML writes as nothing) follow as `unset`, so that every key a file may give is listed.
pub fn config_params<T: Serialize>(cfg: &T) -> Vec<(String, String)> {
    let value = toml::Value::try_from(cfg).expect("configs serialize");
    let mut params: Vec<(String, String)> = value
        .as_table()
        .expect("configs are tables")
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    let json = serde_json::to_value(cfg).expect("configs serialize");
    for (k, v) in json.as_object().into_iter().flatten() {
        if v.is_null() {
            params.push((k.clone(), "unset".into()));
        }
    }
    params
}

/// Every congestion controller bfcsim implements, in the registry's order ([`CcConfig::catalog`]).
pub fn catalog() -> Vec<SchemeInfo> {
    CcConfig::catalog()
        .into_iter()
        .map(|c| SchemeInfo {
            name: c.name,
            summary: c.summary,
            params: config_params(&c.defaults)
                .into_iter()
                .filter(|(k, _)| k.as_str() != "name")
                .chain(c.optional)
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_dctcp_parameters() {
        let c = super::catalog();
        let dctcp = c.iter().find(|s| s.name == "dctcp").unwrap();
        let names: Vec<&str> = dctcp.params.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "g",
                "initial_alpha",
                "start",
                "initial_window",
                "max_window"
            ]
        );
        assert_eq!(dctcp.params[4].1, "unset");
    }

    #[test]
    fn lists_every_scheme_the_config_accepts() {
        use bfcsim_core::tagged::Tagged;
        let c = super::catalog();
        let mut listed: Vec<&str> = c.iter().map(|s| s.name).collect();
        listed.sort_unstable();
        let mut accepted = super::CcConfig::VARIANTS.to_vec();
        accepted.sort_unstable();
        assert_eq!(listed, accepted);
        let hpcc = c.iter().find(|s| s.name == "hpcc").unwrap();
        assert!(hpcc.params.iter().any(|(k, v)| k == "eta" && v == "0.95"));
    }
}
