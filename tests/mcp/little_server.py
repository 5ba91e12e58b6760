"""A small MCP server for the tests (written here, unlike mcp-server-time and -git): a tool
that crashes the server, one that echoes, one that shows the environment, one that
reports progress, one that returns an image."""

import base64
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image

server = MCPServer("little")


@server.tool()
def crash() -> str:
    """Crash the whole server."""
    sys.stderr.write("little server: about to crash on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
def environment() -> str:
    """The names of the server's environment variables."""
    return " ".join(sorted(os.environ))


@server.tool()
async def count(upto: int, ctx: Context) -> str:
    """Count, reporting progress."""
    for number in range(1, upto + 1):
        await ctx.report_progress(number, upto, f"step {number}")
    return f"counted to {upto}"


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@server.tool()
def picture() -> Image:
    """A one-pixel picture."""
    return Image(data=PNG, format="png")


@server.tool()
async def hang() -> str:
    """Never answer."""
    import anyio

    await anyio.sleep_forever()
    return "never"


@server.tool()
def visitor(ctx: Context) -> str:
    """The Authorization header of the HTTP request (over HTTP only)."""
    request = ctx.request_context.request
    return request.headers.get("authorization", "none") if request is not None else "none"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named 'grown' and tell the client the list changed."""
    server.add_tool(lambda: "grown up", name="grown", description="Added later.")
    await ctx.request_context.session.send_tool_list_changed()
    return "grew"


@server.tool()
def spawn(count: int) -> str:
    """Start up to ``count`` processes at once (to see the server's process budget); they
    end when the call does. Says how many it got."""
    release, hold = os.pipe()
    children = []
    for _ in range(count):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.close(hold)
            os.read(release, 1)
            os._exit(0)
        children.append(pid)
    os.close(hold)
    os.close(release)
    for pid in children:
        os.waitpid(pid, 0)
    return f"started {len(children)}"


@server.tool()
def write(path: str, text: str) -> str:
    """Write a file (to see where the sandbox lets a server write)."""
    try:
        with open(path, "w") as file:
            file.write(text)
    except OSError as exc:
        return f"refused: {exc.strerror}"
    return "written"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
