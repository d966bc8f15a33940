"""A local instance metadata service and ECS/EKS container credential endpoint for the
runtime-audit tests, speaking the documented protocols, handing out credentials that moto's
STS mints for two roles it creates first: `instance-role` (allowed everything) behind the
metadata service, `task-role` (S3 reads) behind the container endpoint. moto's own metadata
endpoint has fixed, non-AWS-shaped keys and no IMDSv2.

    python3 tests/metadata_server.py MOTO_ENDPOINT [--v1]

- IMDSv2: `PUT /latest/api/token` with `X-aws-ec2-metadata-token-ttl-seconds` gives a
  session token; every `GET /latest/...` must carry it in `X-aws-ec2-metadata-token`, unless
  `--v1` (then a GET without one is answered too, as IMDSv1 does).
- `GET /latest/meta-data/iam/security-credentials/` lists the role; `.../ROLE` is its
  credential document (`Code`, `AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration`).
- `GET /ecs/creds` with `Authorization: ecs-test-authorization` is the container endpoint's
  document (`AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration`, `RoleArn`).

Prints its port, alone on a line, once it listens. Everything on 127.0.0.1.
"""

import json
import secrets
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3

endpoint = sys.argv[1]
allow_v1 = "--v1" in sys.argv[2:]
ECS_AUTH = "ecs-test-authorization"
ROLE = "instance-role"

def client(service):
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="bootstrap",
        aws_secret_access_key="bootstrap",
    )


sts = client("sts")
iam = client("iam")
TRUST = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
)
# The instance role may do anything (what --max-reach must refuse); the task role only reads S3.
POLICIES = {
    ROLE: {"Effect": "Allow", "Action": "*", "Resource": "*"},
    "task-role": {"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": "*"},
}
for role, statement in POLICIES.items():
    iam.create_role(RoleName=role, AssumeRolePolicyDocument=TRUST)
    iam.put_role_policy(
        RoleName=role,
        PolicyName="access",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}),
    )


def mint(role):
    c = sts.assume_role(
        RoleArn=f"arn:aws:iam::123456789012:role/{role}", RoleSessionName="i-0123456789abcdef0"
    )["Credentials"]
    return {
        "AccessKeyId": c["AccessKeyId"],
        "SecretAccessKey": c["SecretAccessKey"],
        "Token": c["SessionToken"],
        "Expiration": c["Expiration"].strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


imds_doc = dict(Code="Success", LastUpdated="2026-12-01T00:00:00Z", Type="AWS-HMAC", **mint(ROLE))
ecs_doc = dict(RoleArn="arn:aws:iam::123456789012:role/task-role", **mint("task-role"))
tokens = set()


class Handler(BaseHTTPRequestHandler):
    def answer(self, code, body, kind="text/plain"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        if self.path != "/latest/api/token":
            return self.answer(404, "not found")
        if not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            return self.answer(400, "missing ttl")
        t = secrets.token_urlsafe(32)
        tokens.add(t)
        self.answer(200, t)

    def do_GET(self):
        if self.path == "/ecs/creds":
            if self.headers.get("Authorization") != ECS_AUTH:
                return self.answer(403, "forbidden")
            return self.answer(200, json.dumps(ecs_doc), "application/json")
        if not self.path.startswith("/latest/"):
            return self.answer(404, "not found")
        if self.headers.get("X-aws-ec2-metadata-token") not in tokens and not allow_v1:
            return self.answer(401, "")
        if self.path == "/latest/meta-data/":
            return self.answer(200, "ami-id\nhostname\niam/\n")
        if self.path == "/latest/meta-data/iam/security-credentials/":
            return self.answer(200, ROLE)
        if self.path == f"/latest/meta-data/iam/security-credentials/{ROLE}":
            return self.answer(200, json.dumps(imds_doc, indent=2))
        self.answer(404, "not found")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
