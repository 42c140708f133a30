"""Every getAcidState case of ../shared/spec/cases.json through the pure core."""

import pytest

from acidtool.core.select import select

from .helpers.cases import compare, inputs
from .helpers.shared import case_params


def state_as_dict(state) -> dict:
    err = state.error
    return {
        "base": state.base, "deltas": state.deltas, "obsolete": state.obsolete,
        "aborted": state.aborted, "original_files": state.original_files,
        "uncompacted_aborts": state.uncompacted_aborts,
        "error": None if err is None else
        {"kind": err.kind, "hive_exception": err.hive_exception, "message": err.message},
    }


@pytest.mark.parametrize("case", case_params("cases", "id"))
def test_select_matches_case(case):
    args = inputs(case)
    state = select(args.listing, args.write_ids, args.txns, args.version,
                   ignore_empty_files=args.ignore_empty_files)
    assert compare(case, state_as_dict(state)) == []


def test_fixture_cases_in_step():
    """tests/fixtures/spec/cases.json is the spec's cases.json, byte for byte."""
    from .helpers.shared import SHARED_SPEC_CASES, SPEC_CASES, require

    assert SPEC_CASES.read_bytes() == require(SHARED_SPEC_CASES).read_bytes(), \
        "cp ../shared/spec/cases.json tests/fixtures/spec/cases.json"
