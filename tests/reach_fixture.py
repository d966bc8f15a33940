"""Set up moto (started by tests/moto_server.py, authentication and IAM permissions enforced)
for the `--reach` tests, through boto3, and print the credentials they "leak" as JSON.

    python3 tests/reach_fixture.py ENDPOINT

The first three calls are unauthenticated (INITIAL_NO_AUTH_ACTION_COUNT=3) and make an admin;
with its key, one identity per kind of reach:

- boss:    an attached managed policy allowing *:* (AdministratorAccess-like)
- reader:  s3:Get*/List* and iam:Get*/List* on * (ReadOnlyAccess-like)
- blind:   s3:GetObject, and a Deny on iam:List*/Get*: it may not read its own policies
- minter:  may read its own policies; its group "keymakers" has an inline iam:CreateAccessKey
- session: an assumed-role session of "crossrole", whose trust names account 210987654321,
           with an inline read policy and an attached managed secretsmanager policy

moto enforces IAM policies on every request after the first three (moto/iam/access_control.py):
Allow, Deny and Action wildcards, resources only as "*" for IAM calls. Every credential is
moto's, fake.
"""

import json
import sys

import boto3

endpoint = sys.argv[1]
ACCOUNT = "123456789012"


def client(service, **creds):
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", **creds)


def doc(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(actions, resource="*"):
    return {"Effect": "Allow", "Action": actions, "Resource": resource}


bootstrap = client("iam", aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
bootstrap.create_user(UserName="admin")
bootstrap.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=doc(allow("*")))
key = bootstrap.create_access_key(UserName="admin")["AccessKey"]
admin = {"aws_access_key_id": key["AccessKeyId"], "aws_secret_access_key": key["SecretAccessKey"]}
iam = client("iam", **admin)


def user(name):
    iam.create_user(UserName=name)
    k = iam.create_access_key(UserName=name)["AccessKey"]
    return [k["AccessKeyId"], k["SecretAccessKey"]]


def managed(name, document):
    return iam.create_policy(PolicyName=name, PolicyDocument=document)["Policy"]["Arn"]


out = {}
out["boss"] = user("boss")
iam.attach_user_policy(UserName="boss", PolicyArn=managed("AdminLike", doc(allow("*"))))

out["reader"] = user("reader")
iam.put_user_policy(
    UserName="reader",
    PolicyName="read",
    PolicyDocument=doc(allow(["s3:Get*", "s3:List*", "iam:Get*", "iam:List*"])),
)

out["blind"] = user("blind")
iam.put_user_policy(
    UserName="blind",
    PolicyName="blinkers",
    PolicyDocument=doc(
        allow("s3:GetObject"),
        {"Effect": "Deny", "Action": ["iam:List*", "iam:Get*"], "Resource": "*"},
    ),
)

out["minter"] = user("minter")
iam.put_user_policy(
    UserName="minter", PolicyName="self", PolicyDocument=doc(allow(["iam:Get*", "iam:List*"]))
)
iam.create_group(GroupName="keymakers")
iam.add_user_to_group(GroupName="keymakers", UserName="minter")
iam.put_group_policy(
    GroupName="keymakers", PolicyName="keys", PolicyDocument=doc(allow("iam:CreateAccessKey"))
)

iam.create_role(
    RoleName="crossrole",
    AssumeRolePolicyDocument=doc(
        {
            "Effect": "Allow",
            "Principal": {
                "AWS": [f"arn:aws:iam::{ACCOUNT}:user/admin", "arn:aws:iam::210987654321:root"]
            },
            "Action": "sts:AssumeRole",
        }
    ),
)
iam.put_role_policy(
    RoleName="crossrole",
    PolicyName="look",
    PolicyDocument=doc(allow(["iam:Get*", "iam:List*", "s3:GetObject"])),
)
iam.attach_role_policy(
    RoleName="crossrole",
    PolicyArn=managed("SecretsRead", doc(allow("secretsmanager:GetSecretValue"))),
)
session = client("sts", **admin).assume_role(
    RoleArn=f"arn:aws:iam::{ACCOUNT}:role/crossrole", RoleSessionName="leaked"
)["Credentials"]
out["session"] = [session["AccessKeyId"], session["SecretAccessKey"], session["SessionToken"]]
json.dump(out, sys.stdout)
