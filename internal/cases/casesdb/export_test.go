package casesdb

// SchemaVersion is the number of schema steps, for the tests.
var SchemaVersion = len(migrations)
