package pdf

// BRDates is brDates for the external tests.
var BRDates = brDates
