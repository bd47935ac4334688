/**
 * Sends each new Contact created without WF_Enriched_At__c to enrichbridge (EnrichbridgeRecordSender):
 * after insert only, as the record-triggered flow Enrichbridge_Contact_Created, so enrichbridge's own
 * updates never send a record again.
 */
trigger EnrichbridgeContactCreated on Contact(after insert) {
    EnrichbridgeRecordSender.onInsert('Contact', Trigger.new, Contact.WF_Enriched_At__c);
}
