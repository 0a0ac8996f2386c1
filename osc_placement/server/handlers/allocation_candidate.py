# SPDX-License-Identifier: Apache-2.0
"""GET /allocation_candidates (1.10)."""

import collections
import threading

from osc_placement.server import http_api
from osc_placement.server.objects import candidate_api
from osc_placement.server.objects import candidate_search
from osc_placement.server.schemas import allocation_candidate as schema
from osc_placement.server.schemas import request_groups


def list_candidates(req):
    req.authorize('placement:allocation_candidates:list')
    request = parsed(req)
    options = candidate_search.SearchOptions.from_conf(req.app.conf.placement)
    with req.db.read() as conn:
        answer = candidate_api.answer(request, conn, options)
    if req.app.metrics is not None:
        req.app.metrics.candidates_answered(
            answer.count, candidate_api.cut_by(request, options, answer.count))
    resp = http_api.Response(200, answer.body)
    # What the answer is built from is freed once it is sent.
    resp.held = answer.held
    return http_api.cached(req, resp, answer.last_modified)


# (query string, microversion) -> the CandidateRequest parsed from them,
# the least recently asked first. A scheduler sends a few queries again
# and again; handing out the same object for each also lets a kept
# structure recognise a request it answered
# (candidate_response.RememberedAnswers).
_PARSED = collections.OrderedDict()
_PARSED_LOCK = threading.Lock()
PARSED_MAX = 1000


def parsed(req):
    """The request's query checked and parsed (errors.BadRequest if it is
    wrong), once per query string and microversion. Checking and parsing
    are pure: a bad query costs no database round trip."""
    key = (req.environ.get('QUERY_STRING', ''), req.version)
    with _PARSED_LOCK:
        request = _PARSED.get(key)
        if request is not None:
            _PARSED.move_to_end(key)
            return request
    pairs = list(req.GET.items())
    schema.check_query(pairs, req.version)
    request = request_groups.parse_candidate_request(pairs, req.version)
    with _PARSED_LOCK:
        # A thread that parsed the same query meanwhile: one object.
        request = _PARSED.setdefault(key, request)
        if len(_PARSED) > PARSED_MAX:
            _PARSED.popitem(last=False)
    return request
