# SPDX-License-Identifier: Apache-2.0
"""Placement's rules for one provider, as the client applies them: what
an inventory can hold and what one allocation from it may be, and the
trait that shares a provider through its aggregates.

Pure: the commands read the providers (resources/providers.py), and
explain.py and the commands judge them by these rules.
"""

SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'


def capacity(inventory):
    """What can be allocated in all, truncated as Placement's usages are."""
    return int(exact_capacity(inventory))


def exact_capacity(inventory):
    """(total - reserved) * ratio, unrounded, as Placement compares one
    request group's amount with it."""
    return ((inventory['total'] - inventory['reserved'])
            * inventory['allocation_ratio'])


# The unit limits of an inventory: each one's name and its test of one
# allocation's amount.
UNIT_LIMITS = (
    ('min_unit', lambda limit, amount: amount >= limit),
    ('max_unit', lambda limit, amount: amount <= limit),
    ('step_size', lambda limit, amount: amount % limit == 0),
)


def unit_checks(inventory, amount):
    """``(limit name, its value, passed)`` for each unit limit the
    inventory has."""
    return [(name, inventory[name], test(inventory[name], amount))
            for name, test in UNIT_LIMITS if name in inventory]


def accepts(inventory, amount):
    """True when one allocation of ``amount`` obeys the unit limits."""
    return all(passed for _, _, passed in unit_checks(inventory, amount))
