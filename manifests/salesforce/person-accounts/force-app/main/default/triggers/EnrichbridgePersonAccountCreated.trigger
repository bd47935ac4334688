/**
 * Sends each new person Account created without WF_Enriched_At__pc to enrichbridge as object Account
 * (EnrichbridgeRecordSender, the Contact and Lead triggers' Queueable): after insert only, so
 * enrichbridge's own updates never send a record again. A business Account (IsPersonAccount false) is
 * never sent: enrichbridge enriches people, and would only skip it.
 *
 * Optional, and deployed only to an org with Person Accounts: IsPersonAccount and the __pc fields (the
 * Contact fields of force-app as the person Account shows them) exist only there. They are referenced
 * statically, so a deploy to an org without them fails at once, naming the field, instead of a trigger
 * that would compile and send nothing; and Salesforce then keeps the field from being deleted under it.
 */
trigger EnrichbridgePersonAccountCreated on Account(after insert) {
    List<Account> people = new List<Account>();
    for (Account record : Trigger.new) {
        if (record.IsPersonAccount == true) {
            people.add(record);
        }
    }
    if (!people.isEmpty()) {
        EnrichbridgeRecordSender.onInsert('Account', people, Account.WF_Enriched_At__pc);
    }
}
