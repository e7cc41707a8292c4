import pytest
from hypothesis import given
from hypothesis import strategies as st

from grainlab.errors import ConfigError
from grainlab.spec import format_spec, parse_spec


def test_parse_and_format_round_trip():
    name, params = parse_spec("fixed_tokens(size=256, overlap=0,tokenizer=cl100k_base)")
    assert name == "fixed_tokens"
    assert params == {"size": 256, "overlap": 0, "tokenizer": "cl100k_base"}
    assert format_spec(name, params) == "fixed_tokens(size=256,overlap=0,tokenizer=cl100k_base)"


def test_values_keep_their_types():
    _, params = parse_spec("x(a=1,b=1.5,c=true,d=BAAI/bge-small-en-v1.5)")
    assert params == {"a": 1, "b": 1.5, "c": True, "d": "BAAI/bge-small-en-v1.5"}


def test_bare_name_has_no_params():
    assert parse_spec("none") == ("none", {})
    assert format_spec("none", {}) == "none"


@pytest.mark.parametrize("bad", ["", "1abc", "fixed(size)", "a(b=1"])
def test_malformed_specs_are_rejected(bad):
    with pytest.raises(ConfigError):
        parse_spec(bad)


@given(st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
                       st.one_of(st.integers(-10**6, 10**6), st.booleans(),
                                 st.floats(allow_nan=False, allow_infinity=False, width=32),
                                 st.from_regex(r"[A-Za-z][A-Za-z0-9_./-]{0,12}", fullmatch=True)
                                 .filter(lambda s: s not in ("true", "false", "True", "False")
                                         and not s.lower().startswith(("inf", "nan")))),
                       max_size=4))
def test_round_trip_property(params):
    text = format_spec("thing", params)
    name, parsed = parse_spec(text)
    assert name == "thing"
    assert format_spec(name, parsed) == text
