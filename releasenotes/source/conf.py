"""Sphinx configuration for the osc-placement release notes."""

project = 'osc-placement release notes'
copyright = 'osc-placement developers'
extensions = ['reno.sphinxext']
master_doc = 'index'
html_theme = 'alabaster'


def _tolerate_notes_added_by_a_merge():
    """reno's scanner refuses a merge commit that adds a note file which
    neither parent had (our history has one, from resolving a conflict):
    it sees the same path added twice, once against each parent, and
    takes it for two notes with one UID. Count each path once."""
    from reno import scanner

    aggregate = scanner._ChangeAggregator.aggregate_changes

    def aggregate_changes(self, walk_entry, changes):
        unique = []
        for change in changes:
            if isinstance(change, list):
                seen, kept = set(), []
                for c in change:
                    key = (c.type, c.old and c.old.path,
                           c.new and c.new.path)
                    if key not in seen:
                        seen.add(key)
                        kept.append(c)
                change = kept
            unique.append(change)
        return aggregate(self, walk_entry, unique)

    scanner._ChangeAggregator.aggregate_changes = aggregate_changes


_tolerate_notes_added_by_a_merge()
