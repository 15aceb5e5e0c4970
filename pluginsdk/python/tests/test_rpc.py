"""The SDK's own gRPC server (rpc.py over _h2.py and _hpack.py), against grpcio's client."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest

from agentengine_runner import _hpack, rpc
from agentengine_runner._proto.runner.v1 import runner_pb2 as pb

SRC = Path(__file__).resolve().parents[1] / "src"


# -- HPACK ----------------------------------------------------------------------------


def test_hpack_decodes_rfc7541_examples() -> None:
    # RFC 7541 C.4: three requests with Huffman-coded strings sharing a dynamic table.
    dec = _hpack.Decoder()
    first = dec.decode(bytes.fromhex("828684418cf1e3c2e5f23a6ba0ab90f4ff"))
    assert first == [(b":method", b"GET"), (b":scheme", b"http"), (b":path", b"/"), (b":authority", b"www.example.com")]
    second = dec.decode(bytes.fromhex("828684be5886a8eb10649cbf"))
    assert second[-2:] == [(b":authority", b"www.example.com"), (b"cache-control", b"no-cache")]
    third = dec.decode(bytes.fromhex("828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"))
    assert third[-1] == (b"custom-key", b"custom-value")
    # C.3.1 without Huffman coding.
    plain = _hpack.Decoder().decode(bytes.fromhex("828684410f7777772e6578616d706c652e636f6d"))
    assert plain[-1] == (b":authority", b"www.example.com")


def test_hpack_huffman_round_trip_and_encoder() -> None:
    rng = random.Random(7)
    for n in (0, 1, 2, 7, 100):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert _hpack.huffman_decode(_hpack.huffman_encode(data)) == data
    headers = [(b"grpc-status", b"3"), (b"grpc-message", b"bad%20input"), (b"x" * 300, b"y" * 5000)]
    assert _hpack.Decoder().decode(_hpack.encode(headers)) == headers


@pytest.mark.parametrize(
    "block",
    [
        "80",  # index 0
        "ff00",  # an index far past both tables
        "3fe13f",  # a table size update (8192) past the 4096 we allow
        "0003",  # a name whose length runs past the block
        "00838c",  # a Huffman string whose padding is not all ones
        "7f",  # a truncated integer
    ],
)
def test_hpack_rejects_malformed_blocks(block: str) -> None:
    with pytest.raises(_hpack.HPACKError):
        _hpack.Decoder().decode(bytes.fromhex(block))


def test_hpack_random_input_only_raises_hpack_errors() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        block = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        try:
            _hpack.Decoder().decode(block)
        except _hpack.HPACKError:
            pass


# -- the server, to a grpcio client ------------------------------------------------------


Handler = Callable[..., object]


@asynccontextmanager
async def _serve(methods: dict[str, tuple[str, Handler]], max_message: int = 32 << 20) -> AsyncIterator[grpc.aio.Channel]:
    with tempfile.TemporaryDirectory(prefix="aer-", dir="/tmp") as d:
        server = rpc.Server(max_message)
        for name, (kind, handler) in methods.items():
            server.add(f"/t.T/{name}", kind, handler, pb.CallRequest.FromString)
        path = os.path.join(d, "s.sock")
        await server.start_unix(path)
        opts = [("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)]
        try:
            async with grpc.aio.insecure_channel(f"unix:{path}", options=opts) as channel:
                yield channel
        finally:
            await server.stop(0.1)


CODEC = {"request_serializer": pb.CallRequest.SerializeToString, "response_deserializer": pb.CallResponse.FromString}


def _unary(channel: grpc.aio.Channel, name: str) -> Callable[[pb.CallRequest], Awaitable[pb.CallResponse]]:
    return channel.unary_unary(f"/t.T/{name}", **CODEC)


def test_unary_status_and_messages() -> None:
    async def echo(req: pb.CallRequest, ctx: rpc.ServicerContext) -> pb.CallResponse:
        if req.method == "abort":
            await ctx.abort(rpc.StatusCode.FAILED_PRECONDITION, "nicht möglich: 100% kaputt\nzeile 2")
        if req.method == "raise":
            raise ValueError("boom")
        return pb.CallResponse(json=req.json)

    async def scenario() -> None:
        async with _serve({"Echo": (rpc.UNARY_UNARY, echo)}) as ch:
            call = _unary(ch, "Echo")
            assert (await call(pb.CallRequest(json=b"{}"), timeout=5)).json == b"{}"
            big = os.urandom(3 << 20)  # past grpcio's 64 KiB windows and our 1 MiB frames
            assert (await call(pb.CallRequest(json=big), timeout=5)).json == big
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call(pb.CallRequest(method="abort"), timeout=5)
            assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert err.value.details() == "nicht möglich: 100% kaputt\nzeile 2"
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call(pb.CallRequest(method="raise"), timeout=5)
            assert err.value.code() == grpc.StatusCode.UNKNOWN
            assert "boom" in (err.value.details() or "")
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await _unary(ch, "Missing")(pb.CallRequest(), timeout=5)
            assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
            # Calls at once on one connection.
            many = await asyncio.gather(*(call(pb.CallRequest(json=str(i).encode()), timeout=5) for i in range(50)))
            assert [r.json for r in many] == [str(i).encode() for i in range(50)]

    asyncio.run(scenario())


def test_message_size_limit() -> None:
    async def echo(req: pb.CallRequest, ctx: rpc.ServicerContext) -> pb.CallResponse:
        return pb.CallResponse(json=req.json * 2)

    async def scenario() -> None:
        async with _serve({"Echo": (rpc.UNARY_UNARY, echo)}, max_message=1000) as ch:
            call = _unary(ch, "Echo")
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call(pb.CallRequest(json=b"x" * 2000), timeout=5)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call(pb.CallRequest(json=b"x" * 600), timeout=5)  # the answer is too large
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert (await call(pb.CallRequest(json=b"x" * 100), timeout=5)).json == b"x" * 200

    asyncio.run(scenario())


def test_streams_and_cancellation() -> None:
    cancelled = asyncio.Event()

    async def count(req: pb.CallRequest, ctx: rpc.ServicerContext) -> AsyncIterator[pb.CallResponse]:
        for i in range(int(req.json)):
            yield pb.CallResponse(json=str(i).encode())

    async def forever(req: pb.CallRequest, ctx: rpc.ServicerContext) -> None:
        try:
            await ctx.write(pb.CallResponse(json=b"first"))
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def total(requests: AsyncIterator[pb.CallRequest], ctx: rpc.ServicerContext) -> pb.CallResponse:
        return pb.CallResponse(json=b"".join([r.json async for r in requests]))

    async def scenario() -> None:
        methods = {"Count": (rpc.UNARY_STREAM, count), "Forever": (rpc.UNARY_STREAM, forever), "Total": (rpc.STREAM_UNARY, total)}
        async with _serve(methods) as ch:
            stream = ch.unary_stream("/t.T/Count", **CODEC)
            got = [r.json async for r in stream(pb.CallRequest(json=b"2000"), timeout=10)]
            assert got == [str(i).encode() for i in range(2000)]

            call = ch.unary_stream("/t.T/Forever", **CODEC)(pb.CallRequest(), timeout=10)
            assert (await call.read()).json == b"first"
            call.cancel()
            await asyncio.wait_for(cancelled.wait(), 5)

            upload = ch.stream_unary("/t.T/Total", **CODEC)

            async def parts() -> AsyncIterator[pb.CallRequest]:
                for p in (b"a", b"b", b"c"):
                    yield pb.CallRequest(json=p)

            assert (await upload(parts(), timeout=5)).json == b"abc"

    asyncio.run(scenario())


def test_a_runner_process_does_not_import_grpcio() -> None:
    code = (
        "import sys\n"
        "import agentengine_runner, agentengine_runner.server, agentengine_runner.__main__\n"
        "assert 'grpc' not in sys.modules, sorted(m for m in sys.modules if m.startswith('grpc'))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)
