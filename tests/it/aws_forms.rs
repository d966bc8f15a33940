//! Every shape an AWS credential takes in a runtime's output and files: found, paired into one
//! credential set, with the account decoded; Bedrock API keys with what they carry.

use crate::synth::{Rng, B64, BASE32};
use crate::util::Sandbox;
use base64::Engine as _;

struct Creds {
    id: String,
    secret: String,
    token: String,
}

fn creds(seed: u64, prefix: &str) -> Creds {
    let mut r = Rng::new(seed);
    Creds {
        id: format!("{prefix}{}", r.chars(BASE32, 16)),
        secret: r.chars(B64, 40),
        token: format!("IQoJb3JpZ2luX2Vj{}", r.chars(B64, 320)),
    }
}

/// The shapes, by name: (file name, content, whether it holds a session token).
fn shapes() -> Vec<(&'static str, String, bool, Creds)> {
    let mut out = Vec::new();
    let c = creds(1, "ASIA");
    let imds = format!(
        "$ curl -s http://169.254.169.254/latest/meta-data/iam/security-credentials/app-role\n{{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : \"2026-12-01T09:00:00Z\",\n  \"Type\" : \"AWS-HMAC\",\n  \"AccessKeyId\" : \"{}\",\n  \"SecretAccessKey\" : \"{}\",\n  \"Token\" : \"{}\",\n  \"Expiration\" : \"2026-12-01T15:00:00Z\"\n}}\n",
        c.id, c.secret, c.token
    );
    out.push(("imds.txt", imds, true, c));
    let c = creds(2, "ASIA");
    let sts = format!(
        "{{\n    \"Credentials\": {{\n        \"AccessKeyId\": \"{}\",\n        \"SecretAccessKey\": \"{}\",\n        \"SessionToken\": \"{}\",\n        \"Expiration\": \"2026-12-01T10:00:00+00:00\"\n    }},\n    \"AssumedRoleUser\": {{\"AssumedRoleId\": \"AROA3XFRBF23:s\", \"Arn\": \"arn:aws:sts::123456789012:assumed-role/r/s\"}}\n}}\n",
        c.id, c.secret, c.token
    );
    out.push(("assume-role.json", sts, true, c));
    let c = creds(3, "ASIA");
    let export = format!(
        "export AWS_ACCESS_KEY_ID={}\nexport AWS_SECRET_ACCESS_KEY={}\nexport AWS_SESSION_TOKEN={}\nexport AWS_CREDENTIAL_EXPIRATION=2026-12-01T10:00:00+00:00\n",
        c.id, c.secret, c.token
    );
    out.push(("export-credentials.sh", export, true, c));
    let c = creds(4, "AKIA");
    let escaped = format!(
        "String body = \"{{\\\"awsAccessKeyId\\\":\\\"{}\\\",\" +\n    \"\\\"awsSecretKey\\\":\\\"{}\\\"}}\";\n",
        c.id, c.secret
    );
    out.push(("Client.java", escaped, false, c));
    let c = creds(5, "AKIA");
    let dotnet = format!(
        "<configuration>\n  <appSettings>\n    <add key=\"AWSAccessKey\" value=\"{}\" />\n    <add key=\"AWSSecretKey\" value=\"{}\" />\n  </appSettings>\n</configuration>\n",
        c.id, c.secret
    );
    out.push(("App.config", dotnet, false, c));
    let c = creds(6, "AKIA");
    let spring = format!(
        "cloud.aws.credentials.access-key={}\ncloud.aws.credentials.secret-key={}\ncloud.aws.region.static=eu-west-1\n",
        c.id, c.secret
    );
    out.push(("application.properties", spring, false, c));
    let c = creds(7, "AKIA");
    let tfstate = format!(
        "{{\n  \"type\": \"aws_iam_access_key\",\n  \"instances\": [{{\n    \"attributes\": {{\n      \"id\": \"{}\",\n      \"secret\": \"{}\",\n      \"status\": \"Active\",\n      \"user\": \"ci\"\n    }}\n  }}]\n}}\n",
        c.id, c.secret
    );
    out.push(("terraform.tfstate", tfstate, false, c));
    let c = creds(8, "AKIA");
    let profile = format!(
        "[default]\nregion = eu-west-1\n\n[profile ci]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
        c.id, c.secret
    );
    out.push(("credentials", profile, false, c));
    let c = creds(9, "AKIA");
    let boto = format!(
        "s3 = boto3.client(\n    \"s3\",\n    aws_access_key_id=\"{}\",\n    aws_secret_access_key=\"{}\",\n)\n",
        c.id, c.secret
    );
    out.push(("upload.py", boto, false, c));
    let c = creds(10, "AKIA");
    let notebook = format!(
        "import os\nos.environ[\"AWS_ACCESS_KEY_ID\"] = \"{}\"\nos.environ[\"AWS_SECRET_ACCESS_KEY\"] = \"{}\"\n",
        c.id, c.secret
    );
    out.push(("cell.py", notebook, false, c));
    let c = creds(11, "AKIA");
    let java = format!(
        "AWSCredentials creds = new BasicAWSCredentials(\"{}\", \"{}\");\n",
        c.id, c.secret
    );
    out.push(("Upload.java", java, false, c));
    let c = creds(12, "AKIA");
    let cli = format!(
        "$ aws configure set aws_access_key_id {}\n$ aws configure set aws_secret_access_key {}\n",
        c.id, c.secret
    );
    out.push(("configure.txt", cli, false, c));
    let c = creds(13, "AKIA");
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let k8s = format!(
        "$ kubectl get secret aws -o yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: aws\ntype: Opaque\ndata:\n  AWS_ACCESS_KEY_ID: {}\n  AWS_SECRET_ACCESS_KEY: {}\n",
        b64(&c.id),
        b64(&c.secret)
    );
    out.push(("kubectl-get-secret.txt", k8s, false, c));
    // Issue 27: the secret on the line after a line that ends with its key id.
    let c = creds(14, "AKIA");
    let next = format!("aws_access_key_id = {}\n{}\n", c.id, c.secret);
    out.push(("next-line.txt", next, false, c));
    let c = creds(15, "AKIA");
    let csv = format!("{},\n{}\n", c.id, c.secret);
    out.push(("split.csv", csv, false, c));
    let c = creds(16, "ASIA");
    let json = format!("{{\"id\": \"{}\",\n  \"key\": \"{}\"}}\n", c.id, c.secret);
    out.push(("split.json", json, false, c));
    out
}

#[test]
fn every_aws_shape_is_found_paired_and_named() {
    let sb = Sandbox::new();
    let shapes = shapes();
    for (name, text, _, _) in &shapes {
        sb.write(&format!("tree/{name}"), text);
    }
    let r = sb.run(&["scan", "tree", "--format", "json", "--show-secrets"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let report = r.json();
    let findings = report["findings"].as_array().unwrap();
    for (name, _, has_token, c) in &shapes {
        let here: Vec<_> = findings
            .iter()
            .filter(|f| f["path"] == format!("tree/{name}").as_str())
            .collect();
        let find = |value: &str| {
            here.iter()
                .find(|f| f["secret"] == value)
                .unwrap_or_else(|| panic!("{name}: {value:.8}… not found in {here:#?}"))
        };
        let id = find(&c.id);
        let secret = find(&c.secret);
        assert_eq!(id["rule"], "aws.access-key-id", "{name}");
        assert!(
            secret["rule"].as_str().unwrap().starts_with("aws."),
            "{name}: {secret:#}"
        );
        if ["next-line.txt", "split.csv", "split.json"].contains(name) {
            assert_eq!(secret["rule"], "aws.secret-access-key.next-line", "{name}");
            assert_eq!(secret["confidence"], "high", "{name}");
        }
        assert!(id["aws_account"].as_str().is_some_and(|a| a.len() == 12));
        let set = &id["credential_set"];
        assert!(set.is_string(), "{name}: {id:#}");
        assert_eq!(&secret["credential_set"], set, "{name}");
        if *has_token {
            let token = find(&c.token);
            assert_eq!(&token["credential_set"], set, "{name}");
        }
    }
}

fn short_term_key(date: &str) -> String {
    let url = format!(
        "bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Algorithm=AWS4-HMAC-SHA256\
         &X-Amz-Credential=ASIAGM2YICRPGYTMSZFK%2F{}%2Fus-west-2%2Fbedrock%2Faws4_request\
         &X-Amz-Date={date}&X-Amz-Expires=43200&X-Amz-SignedHeaders=host\
         &X-Amz-Security-Token=IQoJb3JpZ2luX2VjBu1Pq6BL1fZI%2BNB4FkCTfy2AJIqQILuHklFvOK1BKPQky2F39VEcXF8giYWnjTgsL4SsLCnUAdWnd7CW3D\
         &X-Amz-Signature=f736614f202bf61bdaa57cfe2cf637abcbd46bd6593a6041461d9a2c410fea34&Version=1",
        &date[..8]
    );
    format!(
        "bedrock-api-key-{}",
        base64::engine::general_purpose::STANDARD.encode(url)
    )
}

#[test]
fn bedrock_keys_carry_their_account_region_and_expiry() {
    let sb = Sandbox::new();
    let long = format!(
        "ABSK{}",
        base64::engine::general_purpose::STANDARD.encode(
            "BedrockAPIKey-n7e0-at-908293468954:lJlTd/UoOF2yHD2fsCvSAP2id9iGZeT8/2E4Mg67TR8ned9v"
        )
    );
    let expired = short_term_key("20250707T101500Z");
    let current = short_term_key("20991231T101500Z");
    sb.write(
        "tree/bedrock.env",
        format!("LONG={long}\nOLD_TOKEN={expired}\nAWS_BEARER_TOKEN_BEDROCK={current}\n"),
    );
    let r = sb.run(&["scan", "tree", "--format", "json", "--validate"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let report = r.json();
    let by_line = |line: u64| {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["line"] == line)
            .unwrap_or_else(|| panic!("nothing on line {line}: {report:#}"))
            .clone()
    };
    let l = by_line(1);
    assert_eq!(l["rule"], "aws.bedrock-api-key");
    assert_eq!(l["aws_account"], "908293468954");
    assert_eq!(l["validation"]["status"], "unknown");
    let old = by_line(2);
    assert_eq!(old["rule"], "aws.bedrock-short-term-api-key");
    assert_eq!(old["region"], "us-west-2");
    assert_eq!(old["expires"], "2025-07-07T22:15:00Z");
    assert_eq!(old["expired"], "true");
    assert_eq!(old["validation"]["status"], "expired");
    let now = by_line(3);
    assert_eq!(now["expires"], "2099-12-31T22:15:00Z");
    assert!(now.get("expired").is_none(), "{now:#}");
    assert_eq!(now["validation"]["status"], "unknown");
    // Redacted by default: no key in the report.
    assert!(!r.stdout.contains(&long[4..40]), "a key leaked");
}
