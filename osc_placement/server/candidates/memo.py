# SPDX-License-Identifier: Apache-2.0
"""What a worker remembers between requests, each entry under a key that
says what it depends on and checked against a value, never an object's
identity: the walks of each anchor, the answers as written, the
summaries as written, and the queries parsed.

A kept structure's memory (KeptMemory) lives as long as the structure
(kept.KeptStructure), and the CandidateEngine (engine.py) owns both.
"""

import collections
import threading

from osc_placement.server.candidates import snapshot as snapshot_mod

# The most requests (amounts included) whose walks a kept structure
# remembers (the least recently asked forgotten first), and for one of
# them the most anchors plus candidates: a scheduler sends a few flavors
# again and again; an unlimited request of a large cloud walks every
# tree, which a worker need not hold.
_REMEMBERED_REQUESTS = 16
_REMEMBERED_SIZE = 20000
# The most answers a kept structure remembers, the most bytes they hold
# together, and the most candidates of one answer remembered: larger
# answers (an unlimited one of a large cloud) are written again each
# time.
REMEMBERED_ANSWERS = 16
REMEMBERED_BYTES = 16 * 1024 * 1024
REMEMBERED_CANDIDATES = 5000
# The most parsed queries remembered (ParsedRequests).
PARSED_MAX = 1000


class KeptMemory:
    """What the answers from one kept structure remember, shared by its
    snapshots on every thread:

    index:     the tree index (index.TreeIndex), built by the first search
    walks:     the walks per request (RememberedWalks)
    answers:   the last answers as written (RememberedAnswers)
    summaries: {(classes shown, traits?, tree?): {root: the tree's part
               as written}} (body.py)
    fragments: the engine's allocation requests as written (body.py),
               which outlive a structure: a candidate's body depends on
               the candidate alone"""

    def __init__(self, fragments):
        self.index = None
        self.walks = RememberedWalks()
        self.answers = RememberedAnswers()
        self.summaries = {}
        self.fragments = fragments


class RememberedWalks:
    """The AnchorMemo of each kind of request (request.walk_key) a kept
    structure answered lately, shared by its threads."""

    def __init__(self):
        self._memos = collections.OrderedDict()
        self._lock = threading.Lock()

    def memo(self, key):
        with self._lock:
            memo = self._memos.get(key)
            if memo is not None:
                self._memos.move_to_end(key)
                return memo
            memo = self._memos[key] = AnchorMemo()
            if len(self._memos) > _REMEMBERED_REQUESTS:
                self._memos.popitem(last=False)
            return memo


class AnchorMemo:
    """For one request (amounts included), the candidates each walked
    anchor had, in walk order, with the inventories of its providers (its
    tree's and the sharing providers serving it) they were found under.

    Shared by the requests a kept structure answers, on every thread.
    From claim to claim only a few providers' inventories change, so a
    scheduler's request walks again only the trees the last claims
    changed; the others' candidates are the same."""

    def __init__(self):
        # anchor -> (providers, their inventories, candidates)
        self._found = {}
        self._size = 0  # entries plus their candidates
        self._lock = threading.Lock()

    def recall(self, inventories, anchor):
        """The anchor's candidates if its providers' inventories are
        those they were walked under, else None."""
        entry = self._found.get(anchor)
        if entry is None:
            return None
        providers, held, candidates = entry
        for uuid, mine in zip(providers, held):
            if not snapshot_mod.same_inventories(mine,
                                                 inventories.get(uuid)):
                self._forget(anchor, entry)
                return None
        return candidates

    def _forget(self, anchor, entry):
        """Drop a stale entry, so that a full memo makes room."""
        with self._lock:
            # Unless another thread remembered a new walk meanwhile.
            if self._found.get(anchor) == entry:
                del self._found[anchor]
                self._size -= 1 + len(entry[2])

    def recorded(self, inventories, anchor, providers, walk):
        """An iterator of ``walk``'s candidates (none if None) that
        remembers them once the walk is done: a walk left unfinished (the
        request had enough) is not remembered, nor one walked once the
        memo is full."""
        if self._size >= _REMEMBERED_SIZE:
            return walk or ()
        if walk is None:
            self._remember(inventories, anchor, providers, ())
            return ()
        return self._recording(inventories, anchor, providers, walk)

    def _recording(self, inventories, anchor, providers, walk):
        found = []
        for candidate in walk:
            found.append(candidate)
            yield candidate
        self._remember(inventories, anchor, providers, tuple(found))

    def _remember(self, inventories, anchor, providers, candidates):
        held = [inventories.get(uuid) for uuid in providers]
        with self._lock:
            # An entry it replaces is stale: dropped either way.
            old = self._found.pop(anchor, None)
            if old is not None:
                self._size -= 1 + len(old[2])
            if self._size + 1 + len(candidates) <= _REMEMBERED_SIZE:
                self._found[anchor] = (providers, held, candidates)
                self._size += 1 + len(candidates)


class RememberedAnswers:
    """The last answers of a kept structure's snapshots as JSON, each
    with the usage stamp it was answered under (Snapshot.usage_stamp,
    new whenever a usage total read for a request differs). The same
    request under the same stamp would find the same candidates and
    write the same body, so it is sent again without a search: a
    scheduler's request repeated with no claim between, or an unlimited
    answer that costs more to assemble from the walks remembered than to
    read.

    An answer is remembered for the request's key (request.answer_key)
    and the search options it was found with; never when they ask for a
    random order. Answers under another stamp than the last remembered
    are dropped: no later request gets them."""

    def __init__(self):
        # answer key -> (options, usage stamp, written, count)
        self._answers = collections.OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def worth_keeping(options, candidates):
        """Whether an answer of ``candidates`` found with ``options``
        would be remembered (then it is written at once)."""
        return (not options.randomize
                and len(candidates) <= REMEMBERED_CANDIDATES)

    def recall(self, key, options, usage):
        """(the body as JSON, how many candidates it holds) of the
        request of ``key`` (request.answer_key) under the usage stamp
        ``usage``, or None."""
        with self._lock:
            entry = self._answers.get(key)
            if entry is None:
                return None
            held_options, held_usage, written, count = entry
            if held_usage != usage:
                self._forget(key)
                return None
            if held_options != options:
                return None
            self._answers.move_to_end(key)
            return written, count

    def remember(self, key, options, usage, written, count):
        """Keep ``written`` (the body as JSON, of ``count`` candidates)
        as the answer of the request of ``key`` under the usage stamp
        ``usage`` (the caller asked worth_keeping)."""
        if len(written) > REMEMBERED_BYTES:
            return
        with self._lock:
            for held_key, entry in list(self._answers.items()):
                if entry[1] != usage:
                    self._forget(held_key)
            self._forget(key)
            self._answers[key] = (options, usage, written, count)
            self._bytes += len(written)
            while (len(self._answers) > REMEMBERED_ANSWERS
                   or self._bytes > REMEMBERED_BYTES):
                self._forget(next(iter(self._answers)))

    def _forget(self, key):
        entry = self._answers.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry[2])


class ParsedRequests:
    """The requests parsed from (query string, microversion) keys, the
    least recently asked forgotten first: a scheduler sends a few
    queries again and again."""

    def __init__(self):
        self._parsed = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, parse):
        """The request parsed from ``key``; ``parse()`` parses it (and
        raises for a bad query) if it is not remembered."""
        with self._lock:
            request = self._parsed.get(key)
            if request is not None:
                self._parsed.move_to_end(key)
                return request
        request = parse()
        with self._lock:
            self._parsed[key] = request
            if len(self._parsed) > PARSED_MAX:
                self._parsed.popitem(last=False)
        return request
