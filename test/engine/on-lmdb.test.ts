// The service runs the journal engine by default; PARLAYD_ENGINE=lmdb still runs the lmdb engine (a data
// directory with RFQs active must be started on it once before the journal engine takes it: journal-start
// test). These are the end-to-end tests of the RFQ path, money and withdrawals, run again on that engine
// (test/helpers/server.ts passes PARLAYD_ENGINE to every server it starts).
process.env['PARLAYD_ENGINE'] = 'lmdb';
await import('../rfq/lifecycle.test.js');
await import('../e2e/money.test.js');
await import('../e2e/withdrawals.test.js');
