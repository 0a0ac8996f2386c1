# SPDX-License-Identifier: Apache-2.0
"""The embedded reference OpenStack Placement server."""
