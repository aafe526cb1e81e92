"""Anthropic's models on Bedrock and Vertex, chosen as Claude Code chooses them, end to end:
environment → settings → provider → the fake's Bedrock and Vertex routes, which answer in
those platforms' wire formats. The fake checks the SigV4 signature as AWS would (boto3
signs with static keys from the environment); Google's application-default credentials
refresh against the fake's token route, so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from live_memory.agent.provider_factory import make_provider
from live_memory.config import Settings, load_settings
from live_memory.errors import ConfigError, ProviderAuthError
from live_memory.providers import ChatRequest, Message, Provider, TextBlock
from tests.support.fakes import FakeProvider, Text

KEY_ID, SECRET = "AKIAFAKEKEY000000001", "fake/secret+key/for/the/fake/bedrock/endpoint"
BEDROCK_MODEL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
VERTEX_MODEL = "claude-haiku-4-5@20251001"


def ask(provider: Provider, model: str) -> str:
    question = (Message("user", (TextBlock("where is main?"),)),)
    request = ChatRequest(model, (), question, (), 64, timeout_s=30)

    async def run() -> str:
        try:
            return (await provider.chat(request)).text
        finally:
            await provider.aclose()

    return asyncio.run(run())


def settings_for(tmp_path: Path, **env: str) -> Settings:
    return load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path), **env}, home=tmp_path)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """boto3's credential chain sees only static keys (no profile, files or instance role)."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    yield


def bedrock_env(fake: FakeProvider, region: str) -> dict[str, str]:
    return {
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "AWS_REGION": region,
        "ANTHROPIC_BEDROCK_BASE_URL": fake.url,
    }


@pytest.mark.usefixtures("aws_env")
def test_a_bedrock_call_is_sigv4_signed_and_streamed_from_the_model_path(tmp_path: Path) -> None:
    with FakeProvider(aws_credentials=(KEY_ID, SECRET)) as fake:
        fake.script(Text("main() is in src/app.py."))
        settings = settings_for(tmp_path, **bedrock_env(fake, "us-east-1"))

        answer = ask(make_provider(settings), settings.model)
        [sent] = fake.requests

    assert answer == "main() is in src/app.py."  # the fake refuses a signature it cannot verify
    assert (settings.provider, settings.model) == ("anthropic", BEDROCK_MODEL)
    assert sent.path == f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"
    assert sent.headers["authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential={KEY_ID}/"
    ) and sent.headers["authorization"].split(",")[0].endswith("/us-east-1/bedrock/aws4_request")
    assert "x-amz-date" in sent.headers
    assert "model" not in sent.body
    assert isinstance(sent.body["anthropic_version"], str)


@pytest.mark.usefixtures("aws_env")
def test_a_bedrock_request_signed_with_the_wrong_secret_is_an_auth_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-aws-knows")
    with FakeProvider(aws_credentials=(KEY_ID, SECRET)) as fake:
        # Another region: the SDK keeps one boto3 session (and its credentials) per region.
        settings = settings_for(tmp_path, **bedrock_env(fake, "eu-west-1"))

        with pytest.raises(ProviderAuthError, match="HTTP 403"):
            ask(make_provider(settings), settings.model)
        assert len(fake.requests) == 1


def test_a_bedrock_api_key_goes_out_as_a_bearer_token(tmp_path: Path) -> None:
    with FakeProvider(require_key="bedrock-api-key") as fake:
        env = {**bedrock_env(fake, "us-west-2"), "AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key"}
        settings = settings_for(tmp_path, **env)
        assert ask(make_provider(settings), settings.model)
        [sent] = fake.requests

    assert sent.headers["authorization"] == "Bearer bedrock-api-key"
    assert sent.path == f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"


def test_a_vertex_call_goes_to_the_project_path_with_a_google_bearer_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeProvider(require_key="ya29.fake-google-token") as fake:
        # A service account's key file, as GOOGLE_APPLICATION_CREDENTIALS names one; its
        # signed JWT is exchanged for an access token at the fake's token route.
        adc = tmp_path / "service-account.json"
        adc.write_text(json.dumps(service_account(f"{fake.url}/token")), encoding="utf-8")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
        env = {
            "CLAUDE_CODE_USE_VERTEX": "1",
            "CLOUD_ML_REGION": "us-east5",
            "ANTHROPIC_VERTEX_PROJECT_ID": "my-project",
            "ANTHROPIC_VERTEX_BASE_URL": f"{fake.url}/v1",
        }
        settings = settings_for(tmp_path, **env)

        assert ask(make_provider(settings), settings.model)
        [sent] = fake.requests

    assert settings.model == VERTEX_MODEL
    assert sent.path == (
        f"/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/"
        f"{VERTEX_MODEL}:streamRawPredict"
    )
    assert sent.headers["authorization"] == "Bearer ya29.fake-google-token"
    assert "model" not in sent.body


def service_account(token_uri: str) -> dict[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return {
        "type": "service_account",
        "project_id": "my-project",
        "private_key_id": "k1",
        "private_key": pem.decode(),
        "client_email": "live-memory@my-project.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }


@pytest.mark.parametrize(
    ("flag", "module", "extra"),
    [
        ("CLAUDE_CODE_USE_BEDROCK", "botocore", "bedrock"),
        ("CLAUDE_CODE_USE_VERTEX", "google.auth", "vertex"),
    ],
)
def test_a_cloud_platform_without_its_extra_is_refused_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, module: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: imports fail
    env = {flag: "1", "AWS_REGION": "us-east-1", "CLOUD_ML_REGION": "global"}
    env["ANTHROPIC_VERTEX_PROJECT_ID"] = "p"

    with pytest.raises(ConfigError, match=rf"{flag}.*live-memory\[{extra}\]"):
        make_provider(settings_for(tmp_path, **env))
