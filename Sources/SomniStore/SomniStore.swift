// Nights in SQLite plus night folders on disk.
import CSQLite
import SomniCore
