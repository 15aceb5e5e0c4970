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
        if req.method == "long":
            await ctx.abort(rpc.StatusCode.INVALID_ARGUMENT, "é" * 50_000)
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
                await call(pb.CallRequest(method="long"), timeout=5)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert err.value.details() == "é" * (rpc.MAX_DETAILS // 2)  # cut, whole characters
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


# -- raw frames: what grpcio's client never sends, but a peer may ----------------------


def _frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    n = len(payload)
    return bytes([n >> 16, (n >> 8) & 0xFF, n & 0xFF, kind, flags]) + stream_id.to_bytes(4, "big") + payload


async def _read_frame(reader: asyncio.StreamReader) -> tuple[int, int, int, bytes]:
    head = await reader.readexactly(9)
    n = int.from_bytes(head[:3], "big")
    return head[3], head[4], int.from_bytes(head[5:9], "big") & 0x7FFFFFFF, await reader.readexactly(n)


def test_raw_frames_padding_priority_continuation_and_ping() -> None:
    async def echo(req: pb.CallRequest, ctx: rpc.ServicerContext) -> pb.CallResponse:
        return pb.CallResponse(json=req.json)

    async def scenario() -> None:
        with tempfile.TemporaryDirectory(prefix="aer-", dir="/tmp") as d:
            server = rpc.Server(1 << 20)
            server.add("/t.T/Echo", rpc.UNARY_UNARY, echo, pb.CallRequest.FromString)
            path = os.path.join(d, "s.sock")
            await server.start_unix(path)
            reader, writer = await asyncio.open_unix_connection(path)
            try:
                writer.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(4, 0, 0))
                block = _hpack.encode(
                    [(b":method", b"POST"), (b":scheme", b"http"), (b":path", b"/t.T/Echo"), (b"content-type", b"application/grpc")]
                )
                # HEADERS: padded, with a priority, the block split over a CONTINUATION.
                head = bytes([3]) + bytes(5) + block[:10] + b"\0\0\0"
                writer.write(_frame(1, 0x8 | 0x20, 1, head) + _frame(9, 0x4, 1, block[10:]))
                body = pb.CallRequest(json=b"hello").SerializeToString()
                message = b"\0" + len(body).to_bytes(4, "big") + body
                writer.write(_frame(0, 0x8 | 0x1, 1, bytes([2]) + message + b"\0\0"))
                writer.write(_frame(6, 0, 0, b"12345678"))
                # A second stream whose HEADERS end it (a unary call without its request),
                # the END_STREAM flag on the HEADERS frame, the block ending in a CONTINUATION.
                writer.write(_frame(1, 0x1, 3, block[:5]) + _frame(9, 0x4, 3, block[5:]))
                await writer.drain()
                dec = _hpack.Decoder()
                seen: dict[int, list[tuple[int, object]]] = {1: [], 3: []}
                pong = False
                while not (pong and any(fl & 0x1 for _, fl in seen[1]) and seen[3]):
                    kind, flags, sid, payload = await asyncio.wait_for(_read_frame(reader), 5)
                    if kind == 6:
                        assert flags & 0x1 and payload == b"12345678"
                        pong = True
                    elif kind == 1:
                        headers = dict(dec.decode(payload))
                        seen[sid].append((kind, flags))
                        if sid == 1 and flags & 0x1:
                            assert headers[b"grpc-status"] == b"0"
                        if sid == 3:
                            assert headers[b"grpc-status"] == str(int(rpc.StatusCode.INTERNAL)).encode()
                    elif kind == 0 and sid == 1:
                        assert pb.CallResponse.FromString(payload[5:]).json == b"hello"
            finally:
                writer.close()
                await server.stop(0.1)

    asyncio.run(scenario())
