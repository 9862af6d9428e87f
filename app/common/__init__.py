"""What every binary shares: reading the user's files, printing, logging, and the names the
binaries and the install manifests must agree on.
"""
