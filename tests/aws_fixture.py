"""Set up moto (started by tests/moto_server.py) for the validation tests, through boto3, and
print what the tests need as JSON on stdout.

    python3 tests/aws_fixture.py ENDPOINT

The first three calls are unauthenticated (INITIAL_NO_AUTH_ACTION_COUNT=3): they create an
admin user, its policy and its key. With the admin key: a user whose key the tests "leak",
and a role session that is expired when it is made (a duration of 0 s). The script asks STS
with that session and prints nothing until STS answers ExpiredToken: the expiry is the
server's answer, not a wait timed by the test. Every credential is moto's, fake.
"""

import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint = sys.argv[1]


def client(service, **creds):
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        # Durations below the real minimum (900 s) are what makes expiry testable.
        config=Config(parameter_validation=False),
        **creds,
    )


ALLOW_ALL = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
)
bootstrap = client("iam", aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
bootstrap.create_user(UserName="admin")
bootstrap.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=ALLOW_ALL)
key = bootstrap.create_access_key(UserName="admin")["AccessKey"]
admin = {"aws_access_key_id": key["AccessKeyId"], "aws_secret_access_key": key["SecretAccessKey"]}

iam = client("iam", **admin)
iam.create_user(UserName="leaky")
leaked = iam.create_access_key(UserName="leaky")["AccessKey"]
iam.create_role(
    RoleName="worker",
    AssumeRolePolicyDocument=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}
            ],
        }
    ),
)
session = client("sts", **admin).assume_role(
    RoleArn="arn:aws:iam::123456789012:role/worker", RoleSessionName="s", DurationSeconds=0
)["Credentials"]
expired = client(
    "sts",
    aws_access_key_id=session["AccessKeyId"],
    aws_secret_access_key=session["SecretAccessKey"],
    aws_session_token=session["SessionToken"],
)
# moto's expiry is "now + duration", compared with the time of each request: a request made
# in the same microsecond would still pass, so ask until STS itself says the session expired.
for _ in range(1000):
    try:
        expired.get_caller_identity()
    except ClientError as e:
        if e.response["Error"]["Code"] == "ExpiredToken":
            break
        raise
else:
    sys.exit("the session made with DurationSeconds=0 never expired")
json.dump(
    {
        "admin": [key["AccessKeyId"], key["SecretAccessKey"]],
        "leaked": [leaked["AccessKeyId"], leaked["SecretAccessKey"]],
        "session": [session["AccessKeyId"], session["SecretAccessKey"], session["SessionToken"]],
    },
    sys.stdout,
)
