"""A fake of every provider leakhound's declarative validators call, for the tests.

Each provider answers as its documentation says it does: the same path and method, the
credential read from where the provider reads it (a missing or misplaced credential gets the
provider's "invalid" answer, so a request template that puts the secret in the wrong place
fails the live test), and the documented bodies for a live, invalid, revoked and rate-limited
credential. What it answers is chosen by the URL the test configures as the provider's base:

    http://127.0.0.1:PORT/MODE/PROVIDER   + the provider's own path

MODE is one of live, invalid, revoked, limited, error (503), garbage (200 with HTML), hang
(no answer), redirect (302 to --redirect-to). It listens on a port the system picks and prints
that port alone on a line once it accepts connections. GET /__log returns every request seen
(provider, mode, method, path, and the credential found); GET /__providers returns, per
provider, whether its live answer names an identity and whether it has a revoked answer of its
own (else "revoked" answers as "invalid"). Every credential here is fake.

    python3 tests/fake_provider.py [--redirect-to URL]
"""

import argparse
import base64
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

P = {}

UNAUTH = (401, {"error": {"message": "Unauthorized"}})


def provider(name, method, path, auth, live, invalid=UNAUTH, revoked=None, limited=None,
             live_headers=None, identity=True):
    P[name] = dict(method=method, path=path, auth=auth, live=live, invalid=invalid,
                   revoked=revoked, limited=limited or (429, {"error": "rate limited"}),
                   live_headers=live_headers or {}, identity=identity)


B = "bearer"
# Model and AI platforms.
provider("openai", "GET", "/v1/me", B,
         {"object": "user", "id": "user-fake1", "email": "fake@example.com",
          "orgs": {"object": "list", "data": [{"id": "org-fake1", "title": "Fake Org"}]}},
         invalid=(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}),
         revoked=(401, {"error": {"message": "This key has been deactivated", "code": "account_deactivated"}}))
provider("anthropic", "GET", "/v1/models", "header:x-api-key",
         {"data": [{"type": "model", "id": "claude-fake"}], "has_more": False},
         invalid=(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
         revoked=(403, {"type": "error", "error": {"type": "permission_error", "message": "key disabled"}}),
         limited=(429, {"type": "error", "error": {"type": "rate_limit_error"}}), identity=False)
provider("anthropic-admin", "GET", "/v1/organizations/me", "header:x-api-key",
         {"id": "fake-org-uuid", "type": "organization", "name": "Fake Org"},
         invalid=(401, {"type": "error", "error": {"type": "authentication_error"}}))
provider("huggingface", "GET", "/api/whoami-v2", B,
         {"type": "user", "id": "fake-id", "name": "fake-user", "orgs": [{"name": "fake-org"}],
          "auth": {"type": "access_token", "accessToken": {"displayName": "t", "role": "write"}}},
         invalid=(401, {"error": "Invalid credentials in Authorization header"}))
for name, path in [("groq", "/openai/v1/models"), ("mistral", "/v1/models"),
                   ("fireworks", "/inference/v1/models"), ("cerebras", "/v1/models")]:
    provider(name, "GET", path, B, {"object": "list", "data": [{"id": "fake-model"}]},
             identity=False)
provider("cohere", "POST", "/v1/check-api-key", B,
         {"valid": True, "organization_id": "fake-org", "owner_id": "fake-owner"},
         invalid=(200, {"valid": False}))
provider("google-ai", "GET", "/v1beta/models", "header:x-goog-api-key",
         {"models": [{"name": "models/fake"}]},
         invalid=(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                  "details": [{"reason": "API_KEY_INVALID"}]}}), identity=False)
provider("xai", "GET", "/v1/api-key", B,
         {"name": "fake-key", "api_key_id": "k1", "team_id": "fake-team", "acls": ["api-key:model:*"],
          "api_key_blocked": False, "api_key_disabled": False},
         invalid=(400, {"code": "Client specified an invalid argument", "error": "Incorrect API key"}),
         revoked=(200, {"name": "fake-key", "api_key_id": "k1", "team_id": "fake-team",
                        "api_key_blocked": False, "api_key_disabled": True}))
provider("deepseek", "GET", "/user/balance", B,
         {"is_available": True, "balance_infos": [{"currency": "USD", "total_balance": "1.00"}]},
         identity=False)
provider("replicate", "GET", "/v1/account", B,
         {"type": "user", "username": "fake-user", "name": "Fake"})
provider("together", "GET", "/v1/models", B, [{"id": "fake/model", "object": "model"}], identity=False)
provider("openrouter", "GET", "/api/v1/key", B,
         {"data": {"label": "fake-label", "usage": 0, "limit": None, "is_free_tier": True}})
provider("elevenlabs", "GET", "/v1/user", "header:xi-api-key",
         {"user_id": "fake-uid", "first_name": "Fake", "subscription": {"tier": "free"}},
         invalid=(401, {"detail": {"status": "invalid_api_key"}}))
provider("deepgram", "GET", "/v1/projects", "prefix:Token ",
         {"projects": [{"project_id": "fake-proj", "name": "Fake Project"}]})
provider("assemblyai", "GET", "/v2/transcript", "header:Authorization",
         {"page_details": {"limit": 1}, "transcripts": []}, identity=False)
provider("stability", "GET", "/v1/user/account", B,
         {"id": "fake-id", "email": "fake@example.com", "organizations": [{"name": "fake-org"}]})
provider("pinecone", "GET", "/indexes", "header:Api-Key", {"indexes": []}, identity=False)
provider("wandb", "POST", "/graphql", "basic-pass",
         {"data": {"viewer": {"id": "fake-id", "username": "fake-user", "entity": "fake-team"}}})
provider("runpod", "POST", "/graphql", B,
         {"data": {"myself": {"id": "fake-id", "email": "fake@example.com"}}},
         invalid=(401, {"errors": [{"message": "Unauthorized"}]}))
provider("serpapi", "GET", "/account.json", "query:api_key",
         {"account_id": "fake-acct", "account_email": "fake@example.com", "plan_name": "Free"},
         invalid=(401, {"error": "Invalid API key."}))

# Code hosts, registries, CI, cloud.
provider("github", "GET", "/user", B, {"login": "fake-user", "id": 1, "company": "fake-co"},
         invalid=(401, {"message": "Bad credentials", "status": "401"}),
         limited=(403, {"message": "API rate limit exceeded"}),
         live_headers={"X-OAuth-Scopes": "repo, read:org",
                       "GitHub-Authentication-Token-Expiration": "2031-01-01 00:00:00 UTC"})
provider("gitlab", "GET", "/api/v4/personal_access_tokens/self", "header:PRIVATE-TOKEN",
         {"id": 1, "name": "fake-token", "revoked": False, "active": True, "scopes": ["read_api"],
          "user_id": 42, "expires_at": "2031-01-01"},
         invalid=(401, {"message": "401 Unauthorized"}),
         revoked=(401, {"error": "invalid_token", "error_description": "Token was revoked. You have to re-authorize from the user."}))
provider("npm", "GET", "/-/whoami", B, {"username": "fake-user"})
provider("crates-io", "GET", "/api/v1/me", "header:Authorization",
         {"user": {"id": 7, "login": "fake-user"}, "owned_crates": []},
         invalid=(403, {"errors": [{"detail": "must be logged in to perform that action"}]}))
provider("cloudsmith", "GET", "/v1/user/self/", "header:X-Api-Key",
         {"authenticated": True, "slug": "fake-user", "slug_perm": "fake-perm"},
         invalid=(401, {"detail": "Invalid API key."}))
provider("circleci", "GET", "/api/v2/me", "header:Circle-Token",
         {"id": "fake-id", "login": "fake-user", "name": "Fake"},
         invalid=(401, {"message": "You must log in first."}))
provider("buildkite", "GET", "/v2/access-token", B,
         {"uuid": "fake-uuid", "scopes": ["read_builds", "read_job_env"], "user": {"email": "fake@example.com"}})
provider("snyk", "GET", "/v1/user/me", "prefix:token ",
         {"id": "fake-id", "username": "fake-user", "orgs": [{"name": "fake-org"}]})
provider("sonarcloud", "GET", "/api/authentication/validate", "basic-user", {"valid": True},
         invalid=(200, {"valid": False}), identity=False)
provider("digitalocean", "GET", "/v2/account", B,
         {"account": {"uuid": "fake-uuid", "email": "fake@example.com", "status": "active"}},
         invalid=(401, {"id": "unauthorized", "message": "Unable to authenticate you"}))
provider("cloudflare", "GET", "/client/v4/user/tokens/verify", B,
         {"success": True, "result": {"id": "fake-token-id", "status": "active"}, "errors": []},
         invalid=(401, {"success": False, "errors": [{"code": 1000, "message": "Invalid API Token"}]}),
         revoked=(200, {"success": True, "result": {"id": "fake-token-id", "status": "disabled"}}))
provider("heroku", "GET", "/account", B, {"id": "fake-id", "email": "fake@example.com"},
         invalid=(401, {"id": "unauthorized", "message": "Invalid credentials provided."}))
provider("vercel", "GET", "/v2/user", B,
         {"user": {"id": "fake-id", "username": "fake-user", "email": "fake@example.com"}},
         invalid=(403, {"error": {"code": "forbidden", "message": "Not authorized", "invalidToken": True}}))
provider("netlify", "GET", "/api/v1/user", B, {"id": "fake-id", "email": "fake@example.com"})
provider("render", "GET", "/v1/owners", B,
         [{"owner": {"id": "fake-owner", "name": "Fake", "email": "fake@example.com"}, "cursor": "c"}])
provider("linode", "GET", "/v4/profile", B, {"username": "fake-user", "uid": 5},
         invalid=(401, {"errors": [{"reason": "Invalid Token"}]}),
         live_headers={"X-OAuth-Scopes": "linodes:read_only"})
provider("vultr", "GET", "/v2/account", B,
         {"account": {"name": "Fake", "email": "fake@example.com", "acls": ["subscriptions_view"]}})
provider("hetzner", "GET", "/v1/servers", B, {"servers": [], "meta": {"pagination": {}}},
         invalid=(401, {"error": {"code": "unauthorized", "message": "unable to authenticate"}}),
         identity=False)
provider("terraform-cloud", "GET", "/api/v2/account/details", B,
         {"data": {"id": "user-fake", "attributes": {"username": "fake-user"}}},
         invalid=(401, {"errors": [{"status": "401", "title": "unauthorized"}]}))
provider("doppler", "GET", "/v3/me", B,
         {"slug": "fake-slug", "name": "fake-token", "type": "service_token", "workplace": {"name": "Fake"}})
provider("neon", "GET", "/api/v2/users/me", B, {"id": "fake-id", "email": "fake@example.com"})
provider("pulumi", "GET", "/api/user", "prefix:token ",
         {"name": "fake-user", "githubLogin": "fake-user", "organizations": [{"githubLogin": "fake-org"}]})
provider("fastly", "GET", "/tokens/self", "header:Fastly-Key",
         {"id": "fake-tok", "user_id": "fake-user", "customer_id": "fake-cust", "scopes": ["global:read"],
          "expires_at": None},
         invalid=(401, {"msg": "Provided credentials are missing or invalid"}))
provider("prefect", "GET", "/api/me/", B, {"id": "fake-id", "handle": "fake-user", "email": "fake@example.com"},
         invalid=(401, {"detail": "Invalid authentication credentials"}))
provider("tailscale", "GET", "/api/v2/tailnet/-/devices", B, {"devices": []}, identity=False)
provider("postman", "GET", "/me", "header:X-Api-Key",
         {"user": {"id": 1, "username": "fake-user", "teamName": "Fake"}},
         invalid=(401, {"error": {"name": "AuthenticationError", "message": "Invalid API Key."}}))
provider("sentry", "GET", "/api/0/", B,
         {"version": "0", "auth": {"scopes": ["org:read", "project:read"]},
          "user": {"id": "1", "email": "fake@example.com"}},
         invalid=(401, {"detail": "Invalid token"}))
provider("twilio", "GET", "/2010-04-01/Accounts.json", "basic-pass",
         {"accounts": [{"sid": "ACfake", "friendly_name": "Fake"}], "first_page_uri": "/x"},
         invalid=(401, {"code": 20003, "message": "Authenticate", "status": 401}))

# Chat, payments, email, observability, SaaS.
provider("slack", "POST", "/api/auth.test", B,
         {"ok": True, "url": "https://fake.slack.com/", "team": "Fake Team", "user": "fake-bot",
          "team_id": "T0FAKE", "user_id": "U0FAKE"},
         invalid=(200, {"ok": False, "error": "invalid_auth"}),
         revoked=(200, {"ok": False, "error": "token_revoked"}),
         limited=(429, {"ok": False, "error": "ratelimited"}),
         live_headers={"X-OAuth-Scopes": "chat:write,channels:history"})
provider("discord", "GET", "/api/v10/users/@me", "prefix:Bot ",
         {"id": "1234", "username": "fake-bot", "bot": True},
         invalid=(401, {"message": "401: Unauthorized", "code": 0}))
provider("telegram", "GET", "/getMe", "path:bot",
         {"ok": True, "result": {"id": 1, "is_bot": True, "username": "fake_bot"}},
         invalid=(401, {"ok": False, "error_code": 401, "description": "Unauthorized"}))
provider("stripe", "GET", "/v1/balance", B,
         {"object": "balance", "livemode": False, "available": []},
         invalid=(401, {"error": {"type": "invalid_request_error", "message": "Invalid API Key provided: sk_test_****"}}),
         revoked=(401, {"error": {"type": "invalid_request_error", "message": "Expired API Key provided: sk_live_****"}}),
         identity=False)
provider("square", "GET", "/v2/merchants/me", B,
         {"merchant": {"id": "fake-merchant", "business_name": "Fake"}},
         invalid=(401, {"errors": [{"category": "AUTHENTICATION_ERROR", "code": "UNAUTHORIZED"}]}),
         revoked=(401, {"errors": [{"category": "AUTHENTICATION_ERROR", "code": "ACCESS_TOKEN_REVOKED"}]}))
provider("mollie", "GET", "/v2/methods", B, {"count": 0, "_embedded": {"methods": []}}, identity=False)
provider("sendgrid", "GET", "/v3/scopes", B, {"scopes": ["mail.send", "stats.read"]},
         invalid=(401, {"errors": [{"field": None, "message": "authorization required"}]}),
         identity=False)
provider("mailgun", "GET", "/v4/domains", "basic-pass", {"total_count": 1, "items": [{"name": "fake.example"}]},
         invalid=(401, {"message": "Invalid private key"}))
provider("postmark", "GET", "/server", "header:X-Postmark-Server-Token", {"ID": 1, "Name": "Fake"},
         invalid=(401, {"ErrorCode": 10, "Message": "No Account or Server API tokens were supplied"}))
provider("resend", "GET", "/domains", B, {"object": "list", "data": []},
         invalid=(400, {"statusCode": 400, "name": "validation_error", "message": "API key is invalid"}),
         identity=False)
provider("brevo", "GET", "/v3/account", "header:api-key",
         {"email": "fake@example.com", "companyName": "Fake"},
         invalid=(401, {"code": "unauthorized", "message": "Key not found"}))
provider("mailersend", "GET", "/v1/domains", B, {"data": []}, identity=False)
provider("sparkpost", "GET", "/api/v1/account", "header:Authorization",
         {"results": {"customer_id": 1, "company_name": "Fake"}},
         invalid=(401, {"errors": [{"message": "Unauthorized."}]}))
provider("datadog", "GET", "/api/v1/validate", "header:DD-API-KEY", {"valid": True},
         invalid=(403, {"errors": ["Forbidden"]}), identity=False)
provider("newrelic", "POST", "/graphql", "header:API-Key",
         {"data": {"actor": {"user": {"id": 1, "email": "fake@example.com", "name": "Fake"}}}},
         invalid=(200, {"errors": [{"message": "Invalid API key"}]}))
provider("honeycomb", "GET", "/1/auth", "header:X-Honeycomb-Team",
         {"id": "fake-id", "type": "configuration", "team": {"name": "Fake", "slug": "fake-team"},
          "environment": {"name": "prod", "slug": "prod"}},
         invalid=(401, {"error": "unknown API key - check your credentials"}))
provider("pagerduty", "GET", "/abilities", "prefix:Token token=", {"abilities": ["teams"]},
         invalid=(401, {"error": {"message": "Unauthorized", "code": 2006}}), identity=False)
provider("opsgenie", "GET", "/v2/account", "prefix:GenieKey ", {"data": {"name": "fake-org"}},
         invalid=(401, {"message": "Could not authenticate"}))
provider("rollbar", "GET", "/api/1/project", "header:X-Rollbar-Access-Token",
         {"err": 0, "result": {"id": 1, "name": "fake-project"}},
         invalid=(401, {"err": 1, "message": "invalid access token"}))
provider("linear", "POST", "/graphql", "header:Authorization",
         {"data": {"viewer": {"id": "fake-id", "email": "fake@example.com", "name": "Fake"}}},
         invalid=(400, {"errors": [{"message": "Authentication required",
                                    "extensions": {"code": "AUTHENTICATION_ERROR"}}]}))
provider("notion", "GET", "/v1/users/me", B,
         {"object": "user", "id": "fake-id", "name": "fake-bot", "type": "bot",
          "bot": {"workspace_name": "Fake"}},
         invalid=(401, {"object": "error", "status": 401, "code": "unauthorized"}))
provider("airtable", "GET", "/v0/meta/whoami", B,
         {"id": "usrFake", "email": "fake@example.com", "scopes": ["data.records:read"]},
         invalid=(401, {"error": {"type": "AUTHENTICATION_REQUIRED"}}))
provider("asana", "GET", "/api/1.0/users/me", B,
         {"data": {"gid": "1", "email": "fake@example.com", "workspaces": [{"name": "Fake"}]}},
         invalid=(401, {"errors": [{"message": "Not Authorized"}]}))
provider("figma", "GET", "/v1/me", "header:X-Figma-Token",
         {"id": "1", "email": "fake@example.com", "handle": "fake"},
         invalid=(403, {"status": 403, "err": "Invalid token"}))
provider("clickup", "GET", "/api/v2/user", "header:Authorization",
         {"user": {"id": 1, "username": "fake", "email": "fake@example.com"}},
         invalid=(401, {"err": "Token invalid", "ECODE": "OAUTH_025"}))
provider("typeform", "GET", "/me", B, {"alias": "fake-alias", "email": "fake@example.com"},
         invalid=(403, {"code": "AUTHENTICATION_FAILED"}))
provider("hubspot", "GET", "/account-info/v3/details", B,
         {"portalId": 1234, "accountType": "STANDARD", "timeZone": "UTC"},
         invalid=(401, {"status": "error", "category": "INVALID_AUTHENTICATION"}),
         revoked=(401, {"status": "error", "category": "EXPIRED_AUTHENTICATION"}), identity=False)
provider("contentful", "GET", "/users/me", B, {"sys": {"id": "fake-id"}, "email": "fake@example.com"},
         invalid=(401, {"sys": {"type": "Error", "id": "AccessTokenInvalid"}}))
provider("mapbox", "GET", "/tokens/v2", "query:access_token",
         {"code": "TokenValid", "token": {"user": "fake-user", "authorization": "x", "scopes": ["styles:read"]}},
         invalid=(401, {"code": "TokenInvalid"}), revoked=(401, {"code": "TokenRevoked"}))
provider("dropbox", "POST", "/2/users/get_current_account", B,
         {"account_id": "dbid:fake", "email": "fake@example.com"},
         invalid=(401, {"error_summary": "invalid_access_token/...", "error": {".tag": "invalid_access_token"}}),
         revoked=(401, {"error_summary": "expired_access_token/...", "error": {".tag": "expired_access_token"}}))
provider("intercom", "GET", "/me", B, {"type": "admin", "id": "1", "email": "fake@example.com",
                                        "app": {"name": "Fake"}},
         invalid=(401, {"type": "error.list", "errors": [{"code": "unauthorized"}]}))
provider("launchdarkly", "GET", "/api/v2/caller-identity", "header:Authorization",
         {"accountId": "fake-acct", "tokenName": "fake-token", "projectName": "Fake"},
         invalid=(401, {"code": "unauthorized", "message": "Invalid access token"}))
provider("shortcut", "GET", "/api/v3/member", "header:Shortcut-Token",
         {"id": "fake-id", "mention_name": "fake", "workspace2": {"url_slug": "fake"}})
provider("telnyx", "GET", "/v2/balance", B, {"data": {"balance": "1.00", "currency": "USD"}},
         identity=False)
provider("shodan", "GET", "/api-info", "query:key", {"plan": "fake-plan", "query_credits": 0},
         invalid=(401, {"error": "Invalid API key"}))
provider("uptimerobot", "POST", "/v2/getAccountDetails", "form:api_key",
         {"stat": "ok", "account": {"email": "fake@example.com"}},
         invalid=(200, {"stat": "fail", "error": {"type": "invalid_parameter"}}))

# Revoke endpoints (leakhound --rotate), as each provider documents them: method, path, where
# the credential is read, and the answer when it was revoked. A revoked credential is then
# answered as revoked (or invalid) by its provider in every mode. Revokes are in /__log with
# "revoke": true.
REVOKE = {
    "github": ("POST", "/credentials/revoke", "json:credentials", (202, {})),
    "gitlab": ("DELETE", "/api/v4/personal_access_tokens/self", "header:PRIVATE-TOKEN", (204, None)),
    "slack": ("POST", "/api/auth.revoke", B, (200, {"ok": True, "revoked": True})),
}
REVOKED = set()

LOG = []
LOCK = threading.Lock()
REDIRECT_TO = ""


def credential(p, handler, path, body):
    """The credential where the provider reads it, or None."""
    auth = p["auth"]
    h = handler.headers
    if auth == "bearer":
        v = h.get("Authorization", "")
        return v[len("Bearer "):] if v.startswith("Bearer ") else None
    if auth.startswith("prefix:"):
        prefix = auth[len("prefix:"):]
        v = h.get("Authorization", "")
        return v[len(prefix):] if v.startswith(prefix) else None
    if auth.startswith("header:"):
        return h.get(auth[len("header:"):])
    if auth.startswith("basic-"):
        v = h.get("Authorization", "")
        if not v.startswith("Basic "):
            return None
        user, _, pw = base64.b64decode(v[6:]).decode().partition(":")
        return pw if auth == "basic-pass" else user
    if auth.startswith("query:"):
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
        return (q.get(auth[len("query:"):]) or [None])[0]
    if auth.startswith("form:"):
        q = urllib.parse.parse_qs(body.decode())
        return (q.get(auth[len("form:"):]) or [None])[0]
    if auth == "json:credentials":
        try:
            creds = json.loads(body.decode()).get("credentials") or []
        except ValueError:
            return None
        return creds[0] if len(creds) == 1 else None
    if auth == "path:bot":
        return None  # read from the path by the caller
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, headers=None):
        data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        ctype = "text/html" if isinstance(body, bytes) else "application/json"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def handle_any(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/__log":
            with LOCK:
                return self.send(200, LOG)
        if self.path == "/__providers":
            return self.send(200, {n: {"identity": p["identity"], "revoked": p["revoked"] is not None}
                                   for n, p in P.items()})
        parts = self.path.split("/", 3)
        if len(parts) < 4 or parts[2] not in P:
            return self.send(404, {"error": "no such fake provider"})
        mode, name, rest = parts[1], parts[2], "/" + parts[3]
        p = P[name]
        route = urllib.parse.urlsplit(rest).path
        cred = None
        revoke = REVOKE.get(name)
        if revoke and (method, route) == revoke[:2]:
            cred = credential(dict(p, auth=revoke[2]), self, rest, body)
            with LOCK:
                LOG.append({"provider": name, "mode": mode, "method": method, "path": route,
                            "credential": cred, "revoke": True})
                if cred and mode == "live":
                    REVOKED.add(cred)
            if not cred:
                return self.send(*p["invalid"])
            return self.send(*revoke[3])
        if p["auth"] == "path:bot" and route.startswith("/bot"):
            token, _, route = route[len("/bot"):].partition("/")
            cred, route = urllib.parse.unquote(token), "/" + route
        else:
            cred = credential(p, self, rest, body)
        with LOCK:
            LOG.append({"provider": name, "mode": mode, "method": method, "path": route,
                        "credential": cred})
        if method != p["method"] or route != p["path"]:
            return self.send(404, {"error": f"fake {name}: no {method} {route}"})
        if mode == "hang":
            time.sleep(120)
            return
        if mode == "redirect":
            return self.send(302, {}, {"Location": REDIRECT_TO + rest})
        if mode == "error":
            return self.send(503, {"error": "service unavailable"})
        if mode == "garbage":
            return self.send(200, b"<html><body>Welcome to nginx!</body></html>")
        if mode == "limited":
            return self.send(*p["limited"])
        if cred in REVOKED:
            return self.send(*(p["revoked"] or p["invalid"]))
        if not cred or mode == "invalid":
            return self.send(*p["invalid"])
        if mode == "revoked":
            return self.send(*(p["revoked"] or p["invalid"]))
        if mode == "live":
            return self.send(200, p["live"], p["live_headers"])
        return self.send(404, {"error": f"no mode {mode}"})


def main():
    global REDIRECT_TO
    ap = argparse.ArgumentParser()
    ap.add_argument("--redirect-to", default="http://127.0.0.1:9")
    REDIRECT_TO = ap.parse_args().redirect_to
    # leakhound asks every provider at once: a backlog of 5 would refuse most of them.
    ThreadingHTTPServer.request_queue_size = 256
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
