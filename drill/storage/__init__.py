"""Everything on disk: the database (opening, checking, migrations), reviews and cards, backups and restore, output files, the history in and out, salvage, doctor."""
