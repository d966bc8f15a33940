#!/usr/bin/env python3
"""Plant fake credentials in the real-code benchmark tree and write the truth file.

    plant.py --tree TREE --truth TRUTH.jsonl [--seed N]

Every value is generated here from the seed: random bodies in the shapes the providers issue
(prefixes, lengths, alphabets; GitHub's and npm's CRC32 checksum; age's bech32 checksum; PEM
bodies that decode to a DER header), never a real credential. Each is written into a realistic
place: a line or block added to a real file of the tree (a Python module, a JS/TS file, a Go or
Java or Rust source, a YAML or JSON or TOML config, a Markdown doc, a shell script, a notebook's
output cell) or a small config file added beside a real package (.env, Dockerfile, tfvars,
.aws/credentials, .npmrc, .pypirc, .netrc, docker config.json, a CI workflow, a PEM file).

The truth file has one JSON object a line: path (relative to the tree), line and line_end
(1-based; a PEM block spans several lines), kind (leakhound's rule id for that format),
context (where it was planted) and secret (the planted value). Same seed, same tree: same output.
"""
import argparse
import base64
import json
import os
import random
import re
import string
import zlib

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
BASE32 = string.ascii_uppercase + "234567"
BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


class Gen:
    """Random values in providers' shapes, from one seeded generator."""

    def __init__(self, rng):
        self.r = rng

    def s(self, alphabet, n):
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def digits(self, n):
        return str(self.r.randint(1, 9)) + self.s(string.digits, n - 1)

    def base62_6(self, n):
        out = []
        for _ in range(6):
            out.append(BASE62[n % 62])
            n //= 62
        return "".join(reversed(out))

    def checksummed(self, prefix):
        """GitHub's token format (npm's too): 30 random base62 + CRC32 of them in 6 base62."""
        body = self.s(ALNUM, 30)
        return prefix + body + self.base62_6(zlib.crc32(body.encode()))

    def pem(self, label, der_head, n_random, width=64):
        der = bytes.fromhex(der_head) + self.r.randbytes(n_random)
        b = base64.b64encode(der).decode()
        lines = [b[i:i + width] for i in range(0, len(b), width)]
        return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"

    def jwt(self):
        enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
        head = enc(b'{"alg":"HS256","typ":"JWT"}')
        iat = self.r.randint(1_700_000_000, 1_760_000_000)
        body = json.dumps({"sub": f"user-{self.s(HEX, 12)}", "role": "service", "iat": iat,
                           "exp": iat + 86400 * 30}, separators=(",", ":"))
        return f"{head}.{enc(body.encode())}.{enc(self.r.randbytes(32))}"

    def age_key(self):
        # bech32 (BIP 173) of 32 random bytes under the hrp "age-secret-key-", upper-cased.
        charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
        data = self.r.randbytes(32)
        acc, bits, five = 0, 0, []
        for b in data:
            acc = (acc << 8) | b
            bits += 8
            while bits >= 5:
                bits -= 5
                five.append((acc >> bits) & 31)
        if bits:
            five.append((acc << (5 - bits)) & 31)
        hrp = "age-secret-key-"

        def polymod(values):
            gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
            chk = 1
            for v in values:
                top = chk >> 25
                chk = (chk & 0x1FFFFFF) << 5 ^ v
                for i in range(5):
                    chk ^= gen[i] if (top >> i) & 1 else 0
            return chk

        exp = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
        pm = polymod(exp + five + [0] * 6) ^ 1
        check = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
        return (hrp + "1" + "".join(charset[d] for d in five + check)).upper()


# Each kind: leakhound's rule id, the variable name it is usually kept under, and a generator.
# "aws" and "aws-session" plant two and three values together (key id, secret, session token).
def kinds(g):
    k = {}
    add = lambda kind, var, fn, ml=False: k.__setitem__(kind, (var, fn, ml))
    add("github.pat", "GITHUB_TOKEN", lambda: g.checksummed("ghp_"))
    add("github.oauth-token", "GH_OAUTH_TOKEN", lambda: g.checksummed("gho_"))
    add("github.app-token", "GITHUB_APP_INSTALLATION_TOKEN", lambda: g.checksummed("ghs_"))
    add("github.fine-grained-pat", "GH_TOKEN",
        lambda: "github_pat_11" + g.s(UPPER_ALNUM, 20) + "_" + g.s(ALNUM, 59))
    add("gitlab.pat", "GITLAB_TOKEN", lambda: "glpat-" + g.s(URLSAFE, 20))
    add("slack.bot-token", "SLACK_BOT_TOKEN",
        lambda: f"xoxb-{g.digits(12)}-{g.digits(13)}-{g.s(ALNUM, 24)}")
    add("slack.user-token", "SLACK_USER_TOKEN",
        lambda: f"xoxp-{g.digits(12)}-{g.digits(12)}-{g.digits(13)}-{g.s(HEX, 32)}")
    add("slack.webhook-url", "SLACK_WEBHOOK_URL",
        lambda: f"https://hooks.slack.com/services/T{g.s(UPPER_ALNUM, 10)}/B{g.s(UPPER_ALNUM, 10)}/{g.s(ALNUM, 24)}")
    add("stripe.secret-key", "STRIPE_SECRET_KEY", lambda: "sk_live_51" + g.s(ALNUM, 97))
    add("stripe.restricted-key", "STRIPE_RESTRICTED_KEY", lambda: "rk_live_51" + g.s(ALNUM, 97))
    add("stripe.webhook-secret", "STRIPE_WEBHOOK_SECRET", lambda: "whsec_" + g.s(ALNUM, 32))
    add("openai.api-key", "OPENAI_API_KEY",
        lambda: "sk-proj-" + g.s(URLSAFE, 74) + "T3BlbkFJ" + g.s(URLSAFE, 74))
    add("anthropic.api-key", "ANTHROPIC_API_KEY", lambda: "sk-ant-api03-" + g.s(URLSAFE, 93) + "AA")
    add("huggingface.token", "HF_TOKEN", lambda: "hf_" + g.s(string.ascii_letters, 34))
    add("google.api-key", "GOOGLE_API_KEY", lambda: "AIzaSy" + g.s(URLSAFE, 33))
    add("google.oauth-client-secret", "GOOGLE_CLIENT_SECRET", lambda: "GOCSPX-" + g.s(URLSAFE, 28))
    add("npm.access-token", "NPM_TOKEN", lambda: g.checksummed("npm_"))
    add("pypi.upload-token", "PYPI_API_TOKEN",
        lambda: "pypi-AgEIcHlwaS5vcmcCJ" + g.s(URLSAFE, 160))
    add("sendgrid.api-key", "SENDGRID_API_KEY",
        lambda: f"SG.{g.s(URLSAFE, 22)}.{g.s(URLSAFE, 43)}")
    add("twilio.api-key", "TWILIO_API_KEY", lambda: "SK" + g.s(HEX, 32))
    add("mailchimp.api-key", "MAILCHIMP_API_KEY", lambda: g.s(HEX, 32) + f"-us{g.r.randint(1, 21)}")
    add("jwt", "API_JWT", g.jwt)
    add("database.postgres-url", "DATABASE_URL",
        lambda: f"postgresql://app_user:{g.s(ALNUM, 20)}@orders-db.cluster-c9akciq32bxm.us-east-1.rds.amazonaws.com:5432/orders")
    add("database.mongodb-url", "MONGODB_URI",
        lambda: f"mongodb+srv://svc-api:{g.s(ALNUM, 20)}@cluster0.{g.s(HEX[:10] + 'abcdefghijklmnopqrstuvwxyz', 5)}.mongodb.net/app?retryWrites=true")
    add("database.mysql-url", "MYSQL_URL",
        lambda: f"mysql://shop:{g.s(ALNUM, 18)}@10.0.3.12:3306/shop")
    add("digitalocean.pat", "DIGITALOCEAN_TOKEN", lambda: "dop_v1_" + g.s(HEX, 64))
    add("shopify.access-token", "SHOPIFY_ACCESS_TOKEN", lambda: "shpat_" + g.s(HEX, 32))
    add("dockerhub.pat", "DOCKERHUB_TOKEN", lambda: "dckr_pat_" + g.s(URLSAFE, 27))
    add("datadog.api-key", "DD_API_KEY", lambda: g.s(HEX, 32))
    add("azure.storage-account-key", "AZURE_STORAGE_CONNECTION_STRING",
        lambda: f"DefaultEndpointsProtocol=https;AccountName=st{g.s(string.ascii_lowercase, 8)};"
                f"AccountKey={base64.b64encode(g.r.randbytes(64)).decode()};EndpointSuffix=core.windows.net")
    add("discord.webhook-url", "DISCORD_WEBHOOK_URL",
        lambda: f"https://discord.com/api/webhooks/{g.digits(19)}/{g.s(URLSAFE, 68)}")
    add("telegram.bot-token", "TELEGRAM_BOT_TOKEN", lambda: f"{g.digits(10)}:AA{g.s(URLSAFE, 33)}")
    add("vault.service-token", "VAULT_TOKEN", lambda: "hvs.CAESI" + g.s(URLSAFE, 90))
    add("age.secret-key", "SOPS_AGE_KEY", g.age_key)
    add("terraform.cloud-token", "TFE_TOKEN",
        lambda: g.s(ALNUM, 14) + ".atlasv1." + g.s(URLSAFE, 67))
    add("linear.api-key", "LINEAR_API_KEY", lambda: "lin_api_" + g.s(ALNUM, 40))
    add("sentry.user-token", "SENTRY_AUTH_TOKEN", lambda: "sntryu_" + g.s(HEX, 64))
    add("newrelic.user-key", "NEW_RELIC_API_KEY", lambda: "NRAK-" + g.s(UPPER_ALNUM, 27))
    add("doppler.token", "DOPPLER_TOKEN", lambda: "dp.st.prd." + g.s(ALNUM, 43))
    add("postman.api-key", "POSTMAN_API_KEY", lambda: f"PMAK-{g.s(HEX, 24)}-{g.s(HEX, 34)}")
    add("grafana.service-account-token", "GRAFANA_TOKEN",
        lambda: f"glsa_{g.s(ALNUM, 32)}_{g.s(HEX, 8)}")
    add("databricks.token", "DATABRICKS_TOKEN", lambda: "dapi" + g.s(HEX, 32))
    add("square.access-token", "SQUARE_ACCESS_TOKEN", lambda: "EAAA" + g.s(URLSAFE, 60))
    add("alibaba.access-key-id", "ALIBABA_CLOUD_ACCESS_KEY_ID", lambda: "LTAI" + g.s(ALNUM, 20))
    add("azure.ad-client-secret", "AZURE_CLIENT_SECRET",
        lambda: g.s(ALNUM, 3) + str(g.r.randint(0, 9)) + "Q~" + g.s(ALNUM + "_~.-", 34))
    add("heroku.api-key-v2", "HEROKU_API_KEY", lambda: "HRKU-AA" + g.s(URLSAFE, 58))
    add("generic.password", "DB_PASSWORD", lambda: g.s(ALNUM, 14) + g.s("!@#%^&*", 2) + g.s(ALNUM, 4))
    add("private-key.rsa", "TLS_PRIVATE_KEY",
        lambda: g.pem("RSA PRIVATE KEY", "308204a40201000282010100", 1180), True)
    add("private-key.ec", "SIGNING_KEY",
        lambda: g.pem("EC PRIVATE KEY", "30770201010420", 114), True)
    add("private-key.openssh", "DEPLOY_SSH_KEY",
        lambda: g.pem("OPENSSH PRIVATE KEY", b"openssh-key-v1\0".hex() + "000000046e6f6e65000000046e6f6e6500000000000000010000003300000b7373682d6564323535313900000020", 340, 70), True)
    return k


def camel(var):
    parts = var.lower().split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def ident(style, var):
    return {"upper": var, "snake": var.lower(), "camel": camel(var),
            "kebab": var.lower().replace("_", "-")}[style]


class Tree:
    """The tree's files by extension, and the folders new config files may go in."""

    def __init__(self, root, rng):
        self.root, self.r = root, rng
        self.by_ext, self.used = {}, set()
        pkgs = []
        for d, dirs, fs in os.walk(root):
            dirs.sort()
            rel = os.path.relpath(d, root)
            depth = 0 if rel == "." else rel.count("/") + 1
            if depth == 3 and not rel.startswith("go/") or depth == 5 and rel.startswith("go/src/"):
                pkgs.append(rel)
            for f in sorted(fs):
                ext = f.rsplit(".", 1)[-1].lower() if "." in f else f
                self.by_ext.setdefault(ext, []).append(os.path.join(rel, f))
        self.pkgs = pkgs

    def pick(self, exts, under=None, ok=None):
        """A random file with one of these extensions, not used before, that ok() accepts."""
        cands = [p for e in exts for p in self.by_ext.get(e, [])
                 if (under is None or p.startswith(under)) and p not in self.used]
        for _ in range(400):
            p = self.r.choice(cands)
            if p in self.used:
                continue
            full = os.path.join(self.root, p)
            size = os.path.getsize(full)
            if size == 0 or size > 400_000:
                continue
            try:
                text = open(full, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            if max(map(len, text.splitlines() or [""])) > 400:  # minified or generated
                continue
            if ok and not ok(p, text):
                continue
            self.used.add(p)
            return p, text
        raise SystemExit(f"plant.py: no host file for {exts}")

    def new_file(self, name, under=None):
        """A path for a new file NAME in a package folder that has none yet."""
        roots = [p for p in self.pkgs if under is None or p.startswith(under)]
        for _ in range(400):
            p = os.path.join(self.r.choice(roots), name)
            if p not in self.used and not os.path.exists(os.path.join(self.root, p)):
                self.used.add(p)
                return p
        raise SystemExit(f"plant.py: no folder for {name}")


def insert_at(text, idx, block):
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines[:idx]) + block + "".join(lines[idx:])


def append(text, block):
    return text + ("" if text.endswith("\n") or not text else "\n") + block


def after_imports(text):
    """Index of the line after a Python module's leading imports (0 if none)."""
    lines, last, depth = text.splitlines(), None, 0
    for i, l in enumerate(lines[:200]):
        if depth:
            depth += l.count("(") - l.count(")")
            if depth <= 0:
                depth, last = 0, i
            continue
        if re.match(r"(import|from)\s+\S", l):
            depth = l.count("(") - l.count(")")
            last = i
        elif re.match(r"(def|class|@|if __name__)\b", l):
            break
    return 0 if last is None else last + 1


# ---- contexts: where a unit of (NAME, value) pairs is written --------------------------------
# Each takes (tree, unit) and returns (relative path, new text). A unit is a list of
# (VAR_NAME, value, kind); multi-line values (PEM keys) only go to contexts marked ml.

def ctx_python(t, unit):
    p, text = t.pick(["py"], "python/", lambda p, s: "\t" not in s[:2000])
    lines = ["", "# Deployment credentials"]
    for var, val, _ in unit:
        lines.append(f'{var} = """{val}"""' if "\n" in val else f'{var} = "{val}"')
    return p, insert_at(text, after_imports(text), "\n".join(lines) + "\n\n")


def ctx_js(t, unit):
    p, text = t.pick(["js", "mjs", "cjs", "ts"], "js/", lambda p, s: not p.endswith(".d.ts"))
    esm = re.search(r"^export ", text, re.M) is not None
    body = "".join(f'  {camel(var)}: "{val}",\n' for var, val, _ in unit)
    block = f"\n{'export ' if esm else ''}const deployConfig = {{\n  region: \"us-east-1\",\n{body}}};\n"
    return p, append(text, block)


def ctx_go(t, unit):
    p, text = t.pick(["go"], "go/", lambda p, s: re.search(r"^package \w+", s, re.M) is not None)
    lines = text.splitlines()
    idx = next((i + 1 for i, l in enumerate(lines) if l.startswith("package ")), 0)
    for i, l in enumerate(lines):
        if l.startswith("import ("):
            idx = next(j + 1 for j in range(i, len(lines)) if lines[j].startswith(")"))
            break
        if l.startswith("import \""):
            idx = i + 1
            break
        if l.startswith(("func ", "type ", "var ", "const ")):
            break
    block = "\nconst (\n" + "".join(f'\t{camel(var)} = "{val}"\n' for var, val, _ in unit) + ")\n"
    return p, insert_at(text, idx, block)


def ctx_java(t, unit):
    cls = re.compile(r"^(public\s+)?(final\s+|abstract\s+)*class\s+\w+[^;]*\{\s*$", re.M)
    p, text = t.pick(["java"], "java/", lambda p, s: cls.search(s) is not None)
    m = cls.search(text)
    idx = text[:m.end()].count("\n") + 1
    block = "".join(f'    private static final String {var} = "{val}";\n' for var, val, _ in unit) + "\n"
    return p, insert_at(text, idx, block)


def ctx_rust(t, unit):
    p, text = t.pick(["rs"], "rust/", lambda p, s: "fn " in s)
    block = "\n" + "".join(f'const {var}: &str = "{val}";\n' for var, val, _ in unit)
    return p, append(text, block)


def ctx_markdown(t, unit):
    p, text = t.pick(["md"])
    if any("\n" in v for _, v, _ in unit):
        var, val, _ = unit[0]
        block = f"\n## Deploy key\n\nSave this as `~/.ssh/{var.lower()}`:\n\n```\n{val}\n```\n"
    else:
        exports = "".join(f"export {var}={val}\n" for var, val, _ in unit)
        block = f"\n## Running the examples\n\nSet these first:\n\n```bash\n{exports}```\n"
    return p, append(text, block)


def ctx_yaml(t, unit):
    p, text = t.pick(["yml", "yaml"], ok=lambda p, s: not s.lstrip().startswith("-"))
    out = "\ndeploy:\n  credentials:\n"
    for var, val, _ in unit:
        if "\n" in val:
            out += f"    {var.lower()}: |\n" + "".join(f"      {l}\n" for l in val.splitlines())
        else:
            out += f"    {var.lower()}: {val}\n"
    return p, append(text, out)


def ctx_shell(t, unit):
    p, text = t.pick(["sh", "bash"])
    lines = text.splitlines()
    idx = 0
    while idx < len(lines) and (lines[idx].startswith("#") or not lines[idx].strip()):
        idx += 1
    block = "".join(f'export {var}="{val}"\n' for var, val, _ in unit)
    return p, insert_at(text, idx, block)


def ctx_json(t, unit):
    def ok(p, s):
        ls = s.splitlines()
        return len(ls) > 3 and ls[0].strip() == "{" and re.match(r'^\s+"', ls[1]) is not None
    p, text = t.pick(["json"], ok=ok)
    indent = re.match(r"^(\s+)", text.splitlines()[1]).group(1)
    block = "".join(f'{indent}"{camel(var)}": "{val}",\n' for var, val, _ in unit)
    return p, insert_at(text, 1, block)


def ctx_toml(t, unit):
    p, text = t.pick(["toml"], ok=lambda p, s: os.path.basename(p) in ("Cargo.toml", "pyproject.toml"))
    table = "package.metadata.deploy" if p.endswith("Cargo.toml") else "tool.deploy"
    block = f"\n[{table}]\n" + "".join(f'{var.lower()} = "{val}"\n' for var, val, _ in unit)
    return p, append(text, block)


def ctx_notebook(t, unit):
    def ok(p, s):
        try:
            nb = json.loads(s)
        except ValueError:
            return False
        return isinstance(nb, dict) and nb.get("nbformat") == 4 and isinstance(nb.get("cells"), list)
    p, text = t.pick(["ipynb"], ok=ok)
    nb = json.loads(text)
    pattern = "|".join(sorted({v.split("_")[0] for v, _, _ in unit}))
    nb["cells"].append({
        "cell_type": "code", "execution_count": len(nb["cells"]) + 1, "metadata": {},
        "source": [f"!env | grep -E '{pattern}'"],
        "outputs": [{"name": "stdout", "output_type": "stream",
                     "text": [f"{var}={val}\n" for var, val, _ in unit]}],
    })
    return p, json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def new(name, head, line, tail="", under=None, ml=False):
    """A context that adds a new file NAME: head, one formatted line per pair, tail."""
    def ctx(t, unit):
        p = t.new_file(name, under)
        return p, head + "".join(line(var, val) for var, val, _ in unit) + tail
    ctx.ml = ml
    return ctx


CONTEXTS = {
    "python-module": ctx_python,
    "js-config-object": ctx_js,
    "go-const": ctx_go,
    "java-constant": ctx_java,
    "rust-const": ctx_rust,
    "markdown-code-block": ctx_markdown,
    "yaml-config": ctx_yaml,
    "shell-export": ctx_shell,
    "json-config": ctx_json,
    "toml-table": ctx_toml,
    "notebook-output": ctx_notebook,
    "dotenv": new(".env", "NODE_ENV=production\nPORT=8080\nLOG_LEVEL=info\n",
                  lambda k, v: f"{k}={v}\n"),
    "dockerfile-env": new("Dockerfile", "FROM python:3.11-slim\nWORKDIR /app\nCOPY . .\n",
                          lambda k, v: f"ENV {k}={v}\n",
                          'RUN pip install --no-cache-dir .\nCMD ["python", "-m", "app"]\n'),
    "github-workflow": new(".github/workflows/deploy.yml",
                           "name: deploy\non:\n  push:\n    branches: [main]\njobs:\n  deploy:\n"
                           "    runs-on: ubuntu-latest\n    env:\n",
                           lambda k, v: f"      {k}: {v}\n",
                           "    steps:\n      - uses: actions/checkout@v4\n      - run: make deploy\n"),
    "gitlab-ci": new(".gitlab-ci.yml", "stages: [test, deploy]\nvariables:\n",
                     lambda k, v: f'  {k}: "{v}"\n',
                     "deploy:\n  stage: deploy\n  script:\n    - ./scripts/deploy.sh\n"),
    "terraform-tfvars": new("terraform.tfvars", 'region        = "us-east-1"\ninstance_type = "t3.micro"\n',
                            lambda k, v: f'{k.lower():<13} = "{v}"\n'),
    "java-properties": new("application.properties",
                           "server.port=8080\nspring.application.name=orders\nlogging.level.root=INFO\n",
                           lambda k, v: f"app.{k.lower().replace('_', '-')}={v}\n", under="java/"),
    "ini-config": new("config.ini", "[server]\nhost = 0.0.0.0\nport = 8000\n\n[credentials]\n",
                      lambda k, v: f"{k.lower()} = {v}\n"),
    "pem-file": None,  # filled below: one file per key
}


def ctx_pem(t, unit):
    var, val, _ = unit[0]
    p = t.new_file(t.r.choice(["id_rsa", "server.key", "deploy_key.pem", "tls.key"]))
    return p, val + "\n"


CONTEXTS["pem-file"] = ctx_pem
ML_CONTEXTS = ["pem-file", "python-module", "markdown-code-block", "yaml-config"]


def aws_contexts():
    """Files made for AWS keys alone: the shared credentials file and the console's CSV export."""
    def credentials(t, unit):
        p = t.new_file(".aws/credentials")
        names = {"aws.access-key-id": "aws_access_key_id", "aws.secret-access-key": "aws_secret_access_key",
                 "aws.session-token": "aws_session_token"}
        return p, "[default]\nregion = us-east-1\n" + "".join(f"{names[k]} = {v}\n" for _, v, k in unit)

    def csv(t, unit):
        p = t.new_file("credentials.csv")
        kid, sec = unit[0][1], unit[1][1]
        return p, ("User name,Password,Access key ID,Secret access key,Console login link\n"
                   f"ci-deploy,,{kid},{sec},https://{t.r.randint(10**11, 10**12 - 1)}.signin.aws.amazon.com/console\n")
    return {"aws-credentials-file": credentials, "aws-console-csv": csv}


def dockercfg(g):
    def ctx(t, unit):
        p = t.new_file(".docker/config.json")
        _, val, _ = unit[0]
        return p, ('{\n  "auths": {\n    "https://index.docker.io/v1/": {\n'
                   f'      "auth": "{val}"\n    }}\n  }}\n}}\n')
    return ctx


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-kind", type=int, default=4)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    g = Gen(rng)
    tree = Tree(a.tree, random.Random(a.seed + 1))

    units = []  # (unit, allowed contexts)
    single_ctx = [c for c in CONTEXTS if c != "pem-file"]
    for kind, (var, fn, ml) in sorted(kinds(g).items()):
        for _ in range(a.per_kind):
            units.append(([(var, fn(), kind)], ML_CONTEXTS if ml else single_ctx))
    aws_ctx = single_ctx + list(aws_contexts())
    for i in range(14):  # long-lived IAM user keys
        kid = "AKIA" + g.s(BASE32, 16)
        units.append(([("AWS_ACCESS_KEY_ID", kid, "aws.access-key-id"),
                       ("AWS_SECRET_ACCESS_KEY", g.s(B64, 40), "aws.secret-access-key")], aws_ctx))
    for i in range(6):  # temporary STS credentials, with their session token
        units.append(([("AWS_ACCESS_KEY_ID", "ASIA" + g.s(BASE32, 16), "aws.access-key-id"),
                       ("AWS_SECRET_ACCESS_KEY", g.s(B64, 40), "aws.secret-access-key"),
                       ("AWS_SESSION_TOKEN", "IQoJb3JpZ2luX2Vj" + g.s(B64, 700), "aws.session-token")],
                      [c for c in aws_ctx if c != "aws-console-csv"]))
    for i in range(a.per_kind):
        auth = base64.b64encode(f"ci-bot:{g.s(ALNUM, 20)}".encode()).decode()
        units.append(([("auth", auth, "docker.config-auth")], ["docker-config"]))
    contexts = dict(CONTEXTS, **aws_contexts(), **{"docker-config": dockercfg(g)})

    rng.shuffle(units)
    used = {c: 0 for c in contexts}
    planted, out = [], {}
    for unit, allowed in units:
        # The least-used allowed context, so every place gets its share.
        low = min(used[c] for c in allowed)
        ctx = rng.choice([c for c in allowed if used[c] == low])
        used[ctx] += 1
        path, text = contexts[ctx](tree, unit)
        tree.used.add(path)
        out[path] = text
        for var, val, kind in unit:
            planted.append({"path": path, "kind": kind, "context": ctx, "secret": val})

    for path, text in out.items():
        full = os.path.join(a.tree, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)

    with open(a.truth, "w") as f:
        for t in planted:
            text = out[t["path"]]
            first = t["secret"].splitlines()
            # Search for a random body line (a PEM's first line is its label, not unique).
            probe = first[1] if len(first) > 1 else first[0]
            at = text.find(probe)
            assert at >= 0, (t["path"], t["kind"])
            line = text.count("\n", 0, at) + 1 - (1 if len(first) > 1 else 0)
            t = dict(t, line=line, line_end=line + len(first) - 1)
            f.write(json.dumps({k: t[k] for k in ("path", "line", "line_end", "kind", "context", "secret")}) + "\n")
    by_ctx = {c: n for c, n in sorted(used.items()) if n}
    print(f"planted {len(planted)} secrets of {len({t['kind'] for t in planted})} kinds "
          f"in {len(out)} files; contexts: {by_ctx}")


if __name__ == "__main__":
    main()
