import pytest
from hypothesis import given
from hypothesis import strategies as st

from acidtool.core.bucket import BucketCodecError, decode, encode_v1, to_int32

from .helpers.shared import case_params


@pytest.mark.parametrize("case", case_params("bucket_codec_cases"))
def test_bucket_codec_cases(case):
    if "error" in case:
        with pytest.raises(BucketCodecError):
            decode(case["encoded"])
        return
    got = decode(case["encoded"])
    assert (got.codec_version, got.bucket_id, got.statement_id) == (
        case["codec_version"], case["writer_or_bucket_id"], case["statement_id"])
    if case["codec_version"] == 1:
        assert encode_v1(got.bucket_id, got.statement_id) == case["encoded"]


@pytest.mark.parametrize("encoded,bucket,stmt", [(536870912, 0, 0), (536936448, 1, 0),
                                                 (537001984, 2, 0), (536936451, 1, 3)])
def test_issue_examples(encoded, bucket, stmt):
    d = decode(encoded)
    assert (d.codec_version, d.bucket_id, d.statement_id) == (1, bucket, stmt)


@pytest.mark.parametrize("bucket,stmt", [(-1, 0), (4096, 0), (0, 4096), (0, -2)])
def test_encode_rejects_out_of_range(bucket, stmt):
    with pytest.raises(BucketCodecError):
        encode_v1(bucket, stmt)


def test_statement_none_is_stored_as_zero():
    assert encode_v1(3, -1) == encode_v1(3, 0)


@given(st.integers(0, 4095), st.integers(0, 4095))
def test_v1_round_trip(bucket, stmt):
    d = decode(encode_v1(bucket, stmt))
    assert (d.codec_version, d.bucket_id, d.statement_id) == (1, bucket, stmt)


@given(st.integers(-(2**31), 2**31 - 1))
def test_decode_is_total_over_int32(value):
    try:
        d = decode(value)
    except BucketCodecError:
        assert (value & 0xFFFFFFFF) >> 29 >= 2
    else:
        assert d.codec_version in (0, 1)
        assert to_int32(value) == value
