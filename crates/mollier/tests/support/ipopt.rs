//! Whether IPOPT can be loaded, for the tests that solve.

/// `true` when IPOPT loads; else says why (a failure under `CI=true`) and gives `false`.
pub fn ipopt_here(test: &str) -> bool {
    match mollier_ipopt::available() {
        Ok(()) => true,
        Err(e) => {
            mollier_core::shared_data::skip(test, &e.to_string());
            false
        }
    }
}
