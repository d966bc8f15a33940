"""Start moto's server (PyPI moto[server] 5.2.5) for the validation tests, with three fixes
applied in-process so it answers STS and IAM the way AWS does:

1. Authentication errors in the awsQuery shape AWS uses,
   <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>.
   moto renders <ErrorResponse><Errors><Error>, from which aws-sdk-rust reads no error code.
2. An access key set Inactive is refused with InvalidClientTokenId (moto keeps accepting it).
3. Assumed-role credentials past their expiry are refused with ExpiredToken (moto never
   expires them).

It listens on a port the system picks and prints that port, alone on a line, on stdout once
it accepts connections: no port is guessed, no wait is timed. It counts the requests that
reach moto itself, and answers `GET /__count` (not counted) with that number, so tests count
requests from the server rather than from its log text, whose shape (colours) varies.

Usage (authentication enforced after the first N requests, which bootstrap an admin):
    INITIAL_NO_AUTH_ACTION_COUNT=3 python3 tests/moto_server.py [-H 127.0.0.1]
"""

import argparse
import os
import sys
import threading
import uuid

import moto.core.exceptions as exceptions
import moto.iam.access_control as access_control
from moto.core.utils import utcnow
from moto.sts.models import sts_backends
from xmltodict import unparse

AUTH_ERRORS = {
    "SignatureDoesNotMatchError",
    "InvalidClientTokenIdError",
    "AccessDeniedError",
    "ExpiredTokenError",
}


def aws_query_error(code, message):
    return unparse(
        {
            "ErrorResponse": {
                "@xmlns": "https://sts.amazonaws.com/doc/2011-06-15/",
                "Error": {"Type": "Sender", "Code": code, "Message": message},
                "RequestId": str(uuid.uuid4()),
            }
        },
        full_document=True,
    )


# 1. The error body.
_rest_error_init = exceptions._RESTError.__init__


def rest_error_init(self, error_type, message, *args, **kwargs):
    _rest_error_init(self, error_type, message, *args, **kwargs)
    if type(self).__name__ in AUTH_ERRORS:
        self.description = aws_query_error(error_type, message)


exceptions._RESTError.__init__ = rest_error_init


class ExpiredTokenError(exceptions._RESTError):
    code = 403

    def __init__(self):
        super().__init__("ExpiredToken", "The security token included in the request is expired")


# 2. Inactive user keys.
_user_key_init = access_control.IAMUserAccessKey.__init__


def user_key_init(self, account_id, partition, access_key_id, headers):
    _user_key_init(self, account_id, partition, access_key_id, headers)
    for user in self.backend.list_users("/", None, None):
        for key in user.access_keys:
            if key.access_key_id == access_key_id and key.status != "Active":
                raise access_control.CreateAccessKeyFailure(reason="InvalidId")


access_control.IAMUserAccessKey.__init__ = user_key_init

# 3. Expired role sessions.
_role_key_init = access_control.AssumedRoleAccessKey.__init__


def role_key_init(self, account_id, partition, access_key_id, headers):
    _role_key_init(self, account_id, partition, access_key_id, headers)
    for role in sts_backends[account_id][partition].assumed_roles:
        if role.access_key_id == access_key_id and role.expiration < utcnow():
            raise ExpiredTokenError()


access_control.AssumedRoleAccessKey.__init__ = role_key_init


class CountRequests:
    """WSGI middleware: counts what reaches moto; `/__count` reports the count."""

    def __init__(self, app):
        self.app = app
        self.count = 0
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == "/__count":
            with self.lock:
                body = str(self.count).encode()
            start_response(
                "200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
            )
            return [body]
        # Counted before moto answers: once a client has its answer, the count includes it.
        with self.lock:
            self.count += 1
        return self.app(environ, start_response)


def main(argv):
    from moto.server import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    app = DomainDispatcherApplication(create_backend_app)
    server = make_server(
        args.host, 0, CountRequests(app), threaded=True, request_handler=MotoRequestHandler
    )
    # moto builds some URLs from MOTO_PORT, as its own server sets it.
    os.environ["MOTO_PORT"] = str(server.server_port)
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
