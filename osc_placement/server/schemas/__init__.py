# SPDX-License-Identifier: Apache-2.0
"""JSON schemas per route and microversion (plain dicts), and the one
way a body or a query string is checked against them; request_groups.py
parses the resource, trait and aggregate parameters that passed."""

import functools

import jsonschema
import orjson

from osc_placement.server import errors

QUERY_TEMPLATE = 'Invalid query string parameters: %s'
# Query strings are checked with jsonschema's own format checks (upstream's
# query schemas use only 'uuid', which it checks as upstream does).
_QUERY_FORMATS = jsonschema.FormatChecker()


def for_version(table, version):
    """The schema of the last entry in ``table`` that ``version`` supports.

    ``table`` is a list of (rule, schema), oldest rule first; a rule is
    the name of a row of microversion.RULES."""
    chosen = None
    for rule, schema in table:
        if version.supports(rule):
            chosen = schema
    return chosen


def validate(data, schema, template, formats):
    """Raise errors.BadRequest (``template`` % error) unless ``data`` fits."""
    _check(_validator(_key(schema), formats), data, template)


def validate_query(params, schema):
    """``validate`` for a query: ``params`` maps each key to its last value
    (as upstream validates ``dict(request.GET)``), in the query's order.
    Short ones that pass are remembered, as schedulers repeat them;
    lru_cache does not remember failures, which raise."""
    key, items = _key(schema), tuple(params.items())
    if sum(len(name) + len(value) for name, value in items) <= REMEMBERED:
        _query_passes(key, items)
    else:
        _check(_validator(key, _QUERY_FORMATS), params, QUERY_TEMPLATE)


REMEMBERED = 2048


@functools.lru_cache(maxsize=1024)
def _query_passes(key, items):
    _check(_validator(key, _QUERY_FORMATS), dict(items), QUERY_TEMPLATE)
    return True


def _key(schema):
    # The schema's text: validators are kept per schema, whoever built
    # the dict, and built from the text, so the text's order is theirs.
    return orjson.dumps(schema)


@functools.lru_cache(maxsize=None)
def _validator(key, formats):
    schema = orjson.loads(key)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=formats)


def _check(validator, data, template):
    # Same error selection as jsonschema.validate (best_match), without
    # re-checking the schema on every request.
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise errors.BadRequest(template % error)
