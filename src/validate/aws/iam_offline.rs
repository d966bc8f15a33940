//! The stand-in for `iam.rs` in a build without the `aws` feature: the built-in IAM actions
//! cannot run, so a config that asks for one is refused when it is loaded, not when a live
//! key is found and the action would silently fail.

/// Why an IAM action cannot be configured in this build.
pub(super) fn available() -> Result<(), String> {
    Err(
        "this leakhound was built without the aws feature, so it cannot act through IAM; \
         rebuild with the default features (or --features aws), or use a command hook"
            .into(),
    )
}

/// Never reached: [`available`] refuses every hook that would call it.
pub(super) fn disable(_key_id: &str, _delete: bool, _region: &str) -> Result<String, String> {
    available().map(|_| String::new())
}
