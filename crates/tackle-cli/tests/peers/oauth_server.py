"""An MCP server behind the official Python SDK's OAuth support, for Tackle's sign-in tests
(crates/tackle-cli/tests/all/mcp_oauth.rs). The SDK serves the protected-resource metadata,
the authorization-server metadata, dynamic registration, /authorize and /token; this file's
provider approves every authorization at once (the "browser" is curl) and issues access
tokens that live ACCESS_TTL seconds, so a test can see a refresh. Tool `whoami` answers with
the token's scopes. Prints the server URL once it listens; logs the grants on stderr.

Usage: python oauth_server.py ACCESS_TTL [CLIENT_ID CLIENT_SECRET CALLBACK_PORT]
With a client given, it is registered beforehand as a confidential client
(client_secret_post) whose redirect is http://127.0.0.1:CALLBACK_PORT/callback, and the
metadata offers client_secret_post only: the SDK advertises client_secret_basic too but wants
client_id in the form body even then, which a client using Basic (RFC 6749 2.3.1) does not send.
"""

import secrets
import socket
import sys
import time

import anyio
import uvicorn
from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken, construct_redirect_uri
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

ACCESS_TTL = int(sys.argv[1]) if len(sys.argv) > 1 else 3600


def log(line):
    print(line, file=sys.stderr, flush=True)


class Provider:
    def __init__(self):
        self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}
        if len(sys.argv) > 4:
            client_id, secret, port = sys.argv[2:5]
            self.clients[client_id] = OAuthClientInformationFull(
                client_id=client_id,
                client_secret=secret,
                redirect_uris=[f"http://127.0.0.1:{port}/callback"],
                token_endpoint_auth_method="client_secret_post",
                grant_types=["authorization_code", "refresh_token"],
                scope="mcp",
            )

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info
        log(f"registered {client_info.client_id}")

    async def authorize(self, client, params):
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        log(f"authorized resource={params.resource}")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, code):
        return self.codes.get(code)

    def _issue(self, client_id, scopes, resource):
        access, refresh = "at-" + secrets.token_urlsafe(16), "rt-" + secrets.token_urlsafe(16)
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + ACCESS_TTL, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(
            access_token=access, token_type="Bearer", expires_in=ACCESS_TTL, refresh_token=refresh, scope=" ".join(scopes)
        )

    async def exchange_authorization_code(self, client, code):
        del self.codes[code.code]
        log("exchanged code")
        return self._issue(client.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client, token):
        return self.refresh.get(token)

    async def exchange_refresh_token(self, client, token, scopes):
        del self.refresh[token.token]
        log(f"refreshed for {client.client_id}")
        return self._issue(client.client_id, scopes or token.scopes, token.resource)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def only_secret_post():
    import mcp.server.auth.routes as routes

    build = routes.build_metadata

    def build_metadata(*args, **kwargs):
        metadata = build(*args, **kwargs)
        metadata.token_endpoint_auth_methods_supported = ["client_secret_post"]
        return metadata

    routes.build_metadata = build_metadata


def main():
    if len(sys.argv) > 4:
        only_secret_post()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "oauth-test",
        auth_server_provider=Provider(),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]),
            required_scopes=["mcp"],
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Says that the caller is signed in."""
        return "signed in"

    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning")
    print(f"{base}/mcp", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
