//! Built-in responses through IAM, with the operator's own credentials (the standard AWS
//! credential chain: environment, shared files, ...), never the leaked key: find the key's
//! user (GetAccessKeyLastUsed), then set the key Inactive or delete it.

use aws_sdk_iam::types::StatusType;

/// Built with the AWS SDK: the actions can run (see `iam_offline.rs` for the other case).
pub(super) fn available() -> Result<(), String> {
    Ok(())
}

/// Deactivate (or delete) access key `key_id`; the user it belonged to.
pub(super) fn disable(key_id: &str, delete: bool, region: &str) -> Result<String, String> {
    use crate::validate::aws::net;
    let rt = net::runtime()?;
    rt.block_on(async {
        let http = net::https();
        // Endpoint variables (AWS_ENDPOINT_URL_IAM, AWS_ENDPOINT_URL) are the operator's and
        // are honoured by the loader.
        let conf = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .http_client(http)
            .region(aws_config::Region::new(region.to_string()))
            .load()
            .await;
        let client = aws_sdk_iam::Client::new(&conf);
        let err = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
        let used = client
            .get_access_key_last_used()
            .access_key_id(key_id)
            .send()
            .await
            .map_err(|e| {
                err(
                    "GetAccessKeyLastUsed",
                    &aws_sdk_iam::error::DisplayErrorContext(e),
                )
            })?;
        let user = used
            .user_name()
            .ok_or("GetAccessKeyLastUsed named no user")?
            .to_string();
        if delete {
            client
                .delete_access_key()
                .user_name(&user)
                .access_key_id(key_id)
                .send()
                .await
                .map_err(|e| {
                    err(
                        "DeleteAccessKey",
                        &aws_sdk_iam::error::DisplayErrorContext(e),
                    )
                })?;
        } else {
            client
                .update_access_key()
                .user_name(&user)
                .access_key_id(key_id)
                .status(StatusType::Inactive)
                .send()
                .await
                .map_err(|e| {
                    err(
                        "UpdateAccessKey",
                        &aws_sdk_iam::error::DisplayErrorContext(e),
                    )
                })?;
        }
        Ok(user)
    })
}
